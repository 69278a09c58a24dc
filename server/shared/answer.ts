import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Context } from 'koa';
import { loggedPath, type Logger } from './logger.js';
import { REQUEST_ID } from './requestId.js';

/**
 * What an API route answers: a status, a JSON body already as the text that is sent (or a stream
 * of it: a long list), and the headers that belong to this answer alone.
 */
export interface Answer {
  status: number;
  /** JSON text; none for 204, 304 or a redirect. */
  body?: string | Readable;
  /**
   * Headers of this answer (Allow, Retry-After, Location, Set-Cookie…): the service adds its own.
   */
  headers?: Record<string, string | string[]>;
}

/** `value` as JSON. */
export const json = (status: number, value: unknown, headers?: Answer['headers']): Answer => ({
  status,
  body: JSON.stringify(value),
  headers,
});

/** JSON text made elsewhere (by PostgreSQL, say), sent as it is. */
export const jsonText = (
  status: number,
  text: string | Readable,
  headers?: Answer['headers'],
): Answer => ({ status, body: text, headers });

/** An answer without a body. */
export const noBody = (status: number, headers?: Answer['headers']): Answer => ({
  status,
  headers,
});

export const isAnswer = (value: unknown): value is Answer =>
  typeof (value as Answer | undefined)?.status === 'number';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends answers the way the services' API needs them sent, and no more: one `writeHead` with the
 * service's headers (security headers, made once at start-up) and the answer's own, then the body.
 * Koa's own response handling (`ctx.respond = false` hands the response over, as Koa documents)
 * would set each header through its setters, work out the content type and length from the body
 * and watch the response's end: about half the CPU time of a small request, measured against the
 * same Koa app writing its answer in one step (bench/FINDINGS.md). Pages and files still go
 * through Koa.
 */
export function answerWriter(serviceHeaders: Record<string, string>, reportCut: ReportCut) {
  const flat = Object.entries(serviceHeaders).flat();
  const withJson = ['content-type', JSON_TYPE, ...flat];

  /**
   * The service's headers (with the JSON type when there is a body), the answer's own, and the
   * request's id, as one flat list.
   */
  const headersOf = (ctx: Context, { body, headers }: Answer): string[] => {
    const list = (body === undefined ? flat : withJson).slice();
    if (headers) {
      for (const name in headers) {
        const value = headers[name]!;
        if (typeof value === 'string') list.push(name, value);
        else for (const each of value) list.push(name, each);
      }
    }
    list.push(REQUEST_ID, ctx.state.requestId);
    return list;
  };

  return (ctx: Context, answer: Answer): void => {
    ctx.respond = false;
    const { res } = ctx;
    const { status, body } = answer;
    const headers = headersOf(ctx, answer);
    if (body === undefined) {
      // Nothing to send: no type, and a length of 0 where a body could have been.
      if (status !== 204 && status !== 304) headers.push('content-length', '0');
      res.writeHead(status, headers);
      res.end();
    } else if (typeof body === 'string') {
      headers.push('content-length', String(Buffer.byteLength(body)));
      res.writeHead(status, headers);
      res.end(body);
    } else {
      res.writeHead(status, headers);
      // A HEAD request gets the headers alone: the stream is not read.
      if (ctx.method === 'HEAD') {
        body.destroy();
        res.end();
      } else void streamTo(res, body, ctx, reportCut);
    }
  };
}

/**
 * A streamed body, at the client's pace (backpressure). A failure once the answer has started can
 * only cut it short: the connection is closed, so the client sees a truncated body rather than a
 * complete-looking one, and the failure is reported.
 */
async function streamTo(
  res: Context['res'],
  body: Readable,
  ctx: Context,
  reportCut: ReportCut,
): Promise<void> {
  try {
    await pipeline(body, res);
  } catch (error) {
    res.destroy();
    reportCut(error, ctx);
  }
}

/** Reports a failure after an answer has started (see cutReporter). */
export type ReportCut = (error: unknown, ctx?: Context) => void;

/**
 * Logs a failure after an answer has started, once: Koa reports a failing body it sends as the
 * app's `error` event, and a response destroyed with an error reaches that event too, beside the
 * writer's own report. A client that goes away mid-answer is not a failure of the service.
 */
export function cutReporter(logger: Logger): ReportCut {
  const logged = new WeakSet<object>();
  return (error, ctx) => {
    const { code } = error as { code?: string };
    if (
      code === 'ERR_STREAM_PREMATURE_CLOSE' ||
      code === 'ECONNRESET' ||
      logged.has(error as object)
    )
      return;
    logged.add(error as object);
    logger.error(
      {
        err: error,
        reqId: ctx?.state.requestId,
        method: ctx?.method,
        path: ctx && loggedPath(ctx.path),
      },
      'answer cut short',
    );
  };
}

/**
 * A stream of the texts `pieces` yields, read ahead by one piece at most: it is sent at the
 * client's pace.
 */
export const textStream = (pieces: AsyncIterable<string | Buffer>): Readable =>
  Readable.from(pieces, { highWaterMark: 1, objectMode: false });
