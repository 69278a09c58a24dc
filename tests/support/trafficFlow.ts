import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { send, type Request } from '../../harness/http.js';
import type { ServiceUrls } from '../../harness/processes.js';

// Clients that keep every service of a process busy while a test breaks its database.

export const ANSWER_WITHIN_MS = 5_000;
export const RECOVER_WITHIN_MS = 5_000;

export interface Sample {
  service: 'notes8080' | 'notes8000' | 'health' | 'auth';
  startedAt: number;
  endedAt: number;
  status?: number;
  body?: unknown;
  error?: string;
}

/**
 * Three clients per notes service creating and reading notes, and probes of /health (8000) and
 * /api/me, until `stop()`; each sample is one request.
 */
export function trafficFlow(urls: ServiceUrls) {
  const samples: Sample[] = [];
  let running = true;
  const agent = new http.Agent({ keepAlive: true });

  async function request(service: Sample['service'], base: string, req: Request) {
    const startedAt = performance.now();
    try {
      const { status, json: body } = await send(base, { ...req, agent, timeoutMs: 15_000 });
      const sample = { service, startedAt, endedAt: performance.now(), status, body };
      samples.push(sample);
      return sample;
    } catch (error) {
      samples.push({ service, startedAt, endedAt: performance.now(), error: String(error) });
      return undefined;
    }
  }

  async function notesClient(service: 'notes8080' | 'notes8000', client: number) {
    const text = service === 'notes8080' ? 'body' : 'content';
    for (let i = 0; running; i++) {
      const json = { title: `w${client}-${i}`, [text]: 'x' };
      const created = await request(service, urls[service], {
        method: 'POST',
        path: '/notes',
        json,
      });
      const id = (created?.body as { id?: number } | undefined)?.id;
      if (created?.status === 201 && id)
        await request(service, urls[service], { method: 'GET', path: `/notes/${id}` });
      await sleep(20);
    }
  }

  async function probe(service: 'health' | 'auth', base: string, path: string) {
    while (running) {
      await request(service, base, { method: 'GET', path });
      await sleep(50);
    }
  }

  const clients = [
    ...[0, 1, 2].map((client) => notesClient('notes8080', client)),
    ...[0, 1, 2].map((client) => notesClient('notes8000', client)),
    probe('health', urls.notes8000, '/health'),
    probe('auth', urls.auth, '/api/me'),
  ];
  return {
    samples,
    /** The notes requests among the samples. */
    notes: () => samples.filter((s) => s.service === 'notes8080' || s.service === 'notes8000'),
    /** Milliseconds from `since` until `service` first answered 2xx to a request sent after it. */
    recovery(service: 'notes8080' | 'notes8000', since: number) {
      const first = samples.find(
        (s) => s.service === service && s.startedAt >= since && isSuccess(s),
      );
      return first ? first.endedAt - since : Infinity;
    },
    async stop() {
      running = false;
      await Promise.all(clients);
      agent.destroy();
    },
  };
}

export const isSuccess = (sample: Sample) =>
  sample.status !== undefined && sample.status >= 200 && sample.status < 300;

/** A 500 in the service's own error shape: `{error: string}` (8080), `{detail: string}` (8000). */
export function isShapedOutage(sample: Sample): boolean {
  if (sample.status !== 500 || typeof sample.body !== 'object' || sample.body === null)
    return false;
  const body = sample.body as Record<string, unknown>;
  const key = sample.service === 'notes8080' ? 'error' : 'detail';
  return Object.keys(body).length === 1 && typeof body[key] === 'string';
}
