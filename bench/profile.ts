import fs from 'node:fs/promises';
import path from 'node:path';

/** Reads V8 `.cpuprofile` files (from `node --cpu-prof`) and lists where the time went. */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  totalMs: number;
  /** Self time by function, highest first. */
  functions: { name: string; ms: number }[];
  /** Self time by package (or node internals / project code), highest first. */
  packages: { name: string; ms: number }[];
}

export async function summarizeProfile(file: string, top = 20): Promise<ProfileSummary> {
  const profile = JSON.parse(await fs.readFile(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  let totalUs = 0;
  profile.samples.forEach((id, index) => {
    const us = profile.timeDeltas[index] ?? 0;
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    const where = url ? `${shorten(url)}:${lineNumber + 1}` : '';
    const name = `${functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    packages.set(packageOf(url, functionName), (packages.get(packageOf(url, functionName)) ?? 0) + us);
    totalUs += us;
  });
  const ranked = (map: Map<string, number>) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, us]) => ({ name, ms: us / 1000 }));
  return { totalMs: totalUs / 1000, functions: ranked(functions), packages: ranked(packages) };
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
  if (url.startsWith('node:')) return 'node internals';
  return 'project code';
}

export async function profilesIn(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir).catch(() => [] as string[]);
  return entries.filter((entry) => entry.endsWith('.cpuprofile')).map((entry) => path.join(dir, entry));
}

export function formatProfile(file: string, summary: ProfileSummary): string {
  const line = ({ name, ms }: { name: string; ms: number }) =>
    `${ms.toFixed(0).padStart(8)} ms ${((100 * ms) / summary.totalMs).toFixed(1).padStart(5)}%  ${name}`;
  return [
    `${file}: ${summary.totalMs.toFixed(0)} ms sampled`,
    'Self time by package:',
    ...summary.packages.map(line),
    'Self time by function:',
    ...summary.functions.map(line),
  ].join('\n');
}
