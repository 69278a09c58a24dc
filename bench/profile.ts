import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Where the time went, from V8 `.cpuprofile` files (`node --cpu-prof`): self time by package and by
 * function.
 */

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Prints the summary of every profile in `dir`. */
export async function printProfiles(dir: string, top = 20): Promise<void> {
  const files = (await fs.readdir(dir).catch(() => [] as string[])).filter((entry) =>
    entry.endsWith('.cpuprofile'),
  );
  if (files.length === 0) console.log(`\nno CPU profile was written to ${dir}`);
  for (const file of files.map((entry) => path.join(dir, entry))) {
    const profile = JSON.parse(await fs.readFile(file, 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
    const functions = new Map<string, number>();
    const packages = new Map<string, number>();
    let totalUs = 0;
    profile.samples.forEach((id, index) => {
      const us = profile.timeDeltas[index] ?? 0;
      const { functionName, url, lineNumber } = nodes.get(id)!;
      const where = url ? ` ${shorten(url)}:${lineNumber + 1}` : '';
      const name = `${functionName || '(anonymous)'}${where}`;
      functions.set(name, (functions.get(name) ?? 0) + us);
      packages.set(
        packageOf(url, functionName),
        (packages.get(packageOf(url, functionName)) ?? 0) + us,
      );
      totalUs += us;
    });
    const ranked = (map: Map<string, number>) =>
      [...map]
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(
          ([name, us]) =>
            `${(us / 1000).toFixed(0).padStart(8)} ` +
            `ms ${((100 * us) / totalUs).toFixed(1).padStart(5)}%  ${name}`,
        );
    console.log(
      [
        '',
        `${file}: ${(totalUs / 1000).toFixed(0)} ms sampled`,
        'Self time by package:',
        ...ranked(packages),
        'Self time by function:',
        ...ranked(functions),
      ].join('\n'),
    );
  }
}

function shorten(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  return url.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '');
}

function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1]!;
  return url.startsWith('node:') ? 'node internals' : 'project code';
}
