import type { Measurement } from './results.js';
import { measureScenario, type Round } from './scenario.js';

/** 8000's health check, against the bare HTTP limit. */
export async function healthRound(round: Round, connections: number): Promise<Measurement[]> {
  return [
    await measureScenario(round, {
      service: 'notes-8000',
      scenario: 'GET /health',
      load: { url: round.urls.notes8000, path: '/health', connections },
      koaFloor: true,
    }),
  ];
}
