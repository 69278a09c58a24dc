import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { send } from '../harness/http.js';
import { logLines } from '../harness/logs.js';
import type { RunningProcess } from '../harness/processes.js';
import { listeningPorts } from '../harness/procfs.js';
import { loadConfig } from '../server/config.js';
import { startTestProcess } from './support/services.js';

// Traces as a collector receives them: the whole process started as `npm start` starts it, with
// OTEL_EXPORTER_OTLP_ENDPOINT naming a receiver in this test, which takes OTLP/HTTP in its JSON
// encoding (OTEL_EXPORTER_OTLP_PROTOCOL=http/json), as the OpenTelemetry collector would.

type Attribute = { key: string; value: { stringValue?: string; intValue?: number | string } };
type Span = { traceId: string; name: string; kind: number; attributes: Attribute[] };
type ExportRequest = {
  resourceSpans: { resource: { attributes: Attribute[] }; scopeSpans: { spans: Span[] }[] }[];
};
type Values = Record<string, string | number | undefined>;
/** A span as received, with its attributes as an object and its resource's. */
type Received = { span: Span; attributes: Values; resource: Values };
const [SERVER, CLIENT] = [2, 3];

const attributesOf = (attributes: Attribute[]) =>
  Object.fromEntries(
    attributes.map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)),
    ]),
  );

const received: Received[] = [];
const paths: string[] = [];
let receiver: http.Server;
let server: RunningProcess;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const { resource, scopeSpans } of body.resourceSpans)
        for (const span of scopeSpans.flatMap(({ spans }) => spans)) {
          const [attributes, ofResource] = [span.attributes, resource.attributes].map(attributesOf);
          received.push({ span, attributes: attributes!, resource: ofResource! });
        }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    // Spans are sent a tenth of a second after they end, rather than five seconds.
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  server = await startTestProcess(env, cleanups);
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** The spans received that `match`, once there are some, within 10 s. */
async function spansWhere(match: (span: Received) => boolean): Promise<Received[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = received.filter(match);
    if (found.length > 0 || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The server span of the request for `path`. */
const serverSpan = async (path: string) =>
  (await spansWhere((it) => it.span.kind === SERVER && it.attributes['url.path'] === path))[0];

describe('OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  test('a request is a trace: a server span by route, pg spans, the trace id logged', async () => {
    const json = { title: 'traced', body: 'b' };
    const created = await send(server.urls.notes8080, { method: 'POST', path: '/notes', json });
    expect(created.status).toBe(201);
    const id = (created.json as { id: number }).id;
    const headers = { 'x-request-id': 'traced-read' };
    const path = `/notes/${id}`;
    expect((await send(server.urls.notes8080, { method: 'GET', path, headers })).status).toBe(200);

    const read = await serverSpan(path);
    // The process runs three services: the trace's service is all of them, the span says which.
    expect(read).toMatchObject({
      span: { name: 'GET /notes/{id}' },
      attributes: {
        ...{ 'http.route': '/notes/{id}', 'http.request.method': 'GET' },
        ...{ 'http.response.status_code': 200, 'app.service': 'notes8080' },
      },
      resource: { 'service.name': 'notes8080,notes8000,auth' },
    });

    const { traceId } = read!.span;
    const statements = await spansWhere(
      ({ span, attributes }) =>
        span.traceId === traceId &&
        span.kind === CLIENT &&
        attributes['db.system.name'] === 'postgresql' &&
        attributes['db.query.text'] !== undefined,
    );
    expect(statements.map(({ attributes }) => attributes['db.query.text'])).toContainEqual(
      expect.stringMatching(/^SELECT .* FROM notes WHERE id = \$1$/s),
    );

    const line = logLines(server.output()).find((logged) => logged.reqId === 'traced-read');
    expect(line).toMatchObject({ path: `/notes/${id}`, status: 200, trace_id: traceId });

    expect(paths).toContain('POST /v1/traces application/json');
  });

  test('a request no route takes keeps a server span of its own, without a route', async () => {
    const reply = await send(server.urls.notes8080, { method: 'GET', path: '/no-such-path-4321' });
    expect(reply.status).toBe(404);
    const span = await serverSpan('/no-such-path-4321');
    expect(span).toMatchObject({
      span: { name: 'GET' },
      attributes: { 'http.response.status_code': 404, 'app.service': 'notes8080' },
    });
    expect(span!.attributes['http.route']).toBeUndefined();
  });

  test("OTEL_SERVICE_NAME names the traces' service; a non-http(s) endpoint stops a start", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    const tracing = (env: Record<string, string>) => loadConfig({ ...endpoint, ...env }).tracing;
    expect(tracing({ OTEL_SERVICE_NAME: 'notes' })).toEqual({ serviceName: 'notes' });
    expect(tracing({ SERVICES: 'auth' })).toEqual({ serviceName: 'auth' });
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      'OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318" is not valid: ' +
        'expected an http:// or https:// URL',
    );
  });

  // The process started without METRICS_PORT, whose metrics tests start processes of their own.
  test("METRICS_PORT unset: nothing listens beyond the services' ports, no metrics", async () => {
    expect(server.metricsUrl).toBeUndefined();
    const servicePorts = Object.values(server.urls).map((url) => Number(new URL(url).port));
    expect(await listeningPorts(server.pid)).toEqual(servicePorts.sort((a, b) => a - b));
    expect(server.output()).not.toContain('metrics listening');
  });
});
