// The module hooks loadedModules.mjs registers: each resolved URL appended to the file it was
// given.
import fs from 'node:fs';

let file;

export function initialize(data) {
  file = data;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  fs.appendFileSync(file, `${resolved.url}\n`);
  return resolved;
}
