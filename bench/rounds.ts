import { closeTables, ENDPOINTS, loadOn, openTables, type RoundSide } from './endpoints.js';
import { measure, type Figures, type Timing } from './load.js';
import { startPeer, startProject, type Peer, type SideName } from './sides.js';

/** One round's figures: by endpoint id, each side's. */
export type RoundFigures = Map<string, Partial<Record<SideName, Figures>>>;

/**
 * The project's services, then `peers` on their PostgreSQL, tables open, for `work`; then all
 * stopped, the peers first: the project's process takes PostgreSQL with it.
 */
export async function withSides<T>(
  peers: { names: Peer[]; folder: string },
  work: (sides: RoundSide[]) => Promise<T>,
  wrapper?: string[],
): Promise<T> {
  const project = await startProject(wrapper);
  const { databaseUrl } = project;
  const sides: RoundSide[] = [{ ...project, tables: openTables(project, databaseUrl), fastest: 0 }];
  try {
    for (const name of peers.names) {
      const peer = await startPeer(name, { folder: peers.folder, databaseUrl }, wrapper);
      sides.push({ ...peer, tables: openTables(peer, databaseUrl), fastest: 0 });
    }
    return await work(sides);
  } finally {
    for (const side of sides.reverse()) {
      await closeTables(side.tables);
      await side.stop();
    }
  }
}

/**
 * One round on fresh processes (two of one program differ here by up to a third for their whole
 * life): every endpoint on each side in turn, which side goes first moving on each round.
 */
export function runRound(
  number: number,
  timing: Timing,
  peersFolder: string,
  log: (message: string) => void,
): Promise<RoundFigures> {
  return withSides({ names: ['Koa', 'Fastify'], folder: peersFolder }, async (sides) => {
    const first = (number - 1) % sides.length;
    const order = [...sides.slice(first), ...sides.slice(0, first)];
    const figures: RoundFigures = new Map();
    for (const endpoint of ENDPOINTS) {
      const row: Partial<Record<SideName, Figures>> = {};
      for (const side of order) {
        const measured = await measure(await loadOn(side, endpoint.id, timing), side.pid, timing);
        row[side.name] = measured;
        if (endpoint.id.endsWith('GET /notes/{id}'))
          side.fastest = Math.max(side.fastest, measured.requestsPerSecond);
      }
      const each = Object.entries(row).map(
        ([side, f]) => `${side} ${f.requestsPerSecond.toFixed(0)}`,
      );
      log(`round ${number}: ${endpoint.id}: req/s ${each.join(', ')}`);
      figures.set(endpoint.id, row);
    }
    return figures;
  });
}
