import fc from 'fast-check';
import type { OutgoingHttpHeaders } from 'node:http';
import {
  bodyArb,
  contentTypes,
  craftedJsonTexts,
  deeplyNestedBodies,
  invalidUtf8Bodies,
  nastyStrings,
} from './bodies.js';

// fast-check arbitraries for whole hostile requests: path ids and headers chosen to break the
// router, session lookups and the checks on origin and encoding, on every route of a service.

export type Service = 'notes8080' | 'notes8000' | 'auth';

export interface HostileRequest {
  method: string;
  path: string;
  headers: OutgoingHttpHeaders;
  body?: Buffer;
  /** Replace the `token` cookie with a freshly issued valid session before sending. */
  withValidSession: boolean;
}

/** Path ids a client might send instead of a positive integer; already percent-encoded. */
export const nastyIds = [
  ['1', '2', '0', '-1', '-0', '+1', '1.0', '1.5', '1e3', '0x10', '1_000', '01', '%201'],
  ['2147483647', '2147483648', '9007199254740993', '99999999999999999999999999999999'],
  ['9'.repeat(4300), '9'.repeat(5000), 'NaN', 'Infinity', 'null', 'undefined', 'true'],
  ['__proto__', 'constructor', ...['٣', '１２', '¹', '𝟙'].map(encodeURIComponent)],
  ['%2F', '1%2F2', '..%2F..%2Fetc%2Fpasswd', '%2e%2e', '%00', '1%00', '%', '%zz', '%E0%A4%A'],
  ['%ED%A0%80', '%C0%AF', '%FF', '1%0A', '%20'],
].flat();

const idArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...nastyIds) },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.bigInt().map(String) },
  { weight: 1, arbitrary: fc.double().map((value) => encodeURIComponent(String(value))) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent) },
);

const nastyCookies = [
  ['token=', 'token', '=', ';;;', '=token', 'token=__proto__', 'token=constructor'],
  ['token=toString', 'token=hasOwnProperty', 'token=valueOf', 'token="unterminated'],
  ['token="quoted"', 'token=%ZZ', 'token=%00', 'token=\xff\xfe', 'token=a; token=b'],
  ['token=VALID; token=forged', 'token=forged; token=VALID'],
  [4096, 15_000, 70_000].map((length) => `token=${'a'.repeat(length)}`),
  ['token=00000000-0000-0000-0000-000000000000', manyCookies(2000)],
].flat();

/** `count` cookies besides the session's. */
function manyCookies(count: number): string {
  return Array.from({ length: count }, (_, i) => `c${i}=${i}`).join('; ');
}

const cookieArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constant('token=VALID') },
  { weight: 3, arbitrary: fc.constantFrom(...nastyCookies) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 50, max: 2000 }).map(manyCookies),
  },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: 'binary-ascii', maxLength: 100 })
      .map((text) => text.replace(/[^\t\x20-\x7e]/g, '')),
  },
);

const originArb = fc.constantFrom(
  ...[undefined, undefined, undefined, 'null', 'http://evil.example', 'not a url'],
  'http://127.0.0.1',
);

const encodingArb = fc.constantFrom(
  ...[undefined, undefined, undefined, undefined, 'gzip', 'deflate', 'br', 'identity', 'bogus'],
);

function routes(service: Service): fc.Arbitrary<string> {
  const query = fc.constantFrom(
    ...['', '', '', '?a=1', '?__proto__[polluted]=yes', '?constructor[prototype][polluted]=yes'],
    ...['?%zz', '?x=' + 'y'.repeat(5000)],
  );
  const notes = fc.oneof(
    fc.constant('/notes'),
    idArb.map((id) => `/notes/${id}`),
    idArb.map((id) => `/notes/${id}/extra`),
    fc.constantFrom(
      ...['/notes/', '//notes', '/NOTES', '/notes//1', '/notes/1/', '/', '/unknown', '/%zz'],
      '/notes%2F1',
    ),
  );
  const paths: Record<Service, fc.Arbitrary<string>> = {
    notes8080: notes,
    notes8000: fc.oneof(
      notes,
      fc.constantFrom(
        ...['/health', '/docs', '/openapi.json', '/redoc', '/docs/swagger-ui.css'],
        ...['/docs/..%2F..%2Fpackage.json', '/docs/%zz', '/docs/nope.js'],
      ),
    ),
    auth: fc.constantFrom(
      ...['/api/login', '/api/login', '/api/me', '/api/logout', '/api', '/api/', '/api/unknown'],
      ...['/api/%zz', '/login', '/dashboard', '/', '/assets/..%2F..%2Fpackage.json'],
      ...['/assets/%2e%2e/%2e%2e/package.json', '/assets/%zz', '/assets/nope.js', '/%zz'],
      '/unknown',
    ),
  };
  return fc.tuple(paths[service], query).map(([path, search]) => path + search);
}

export function hostileRequest(service: Service): fc.Arbitrary<HostileRequest> {
  return fc
    .record({
      method: fc.constantFrom(
        ...['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'POST', 'PUT'],
      ),
      path: routes(service),
      body: bodyArb,
      contentType: fc.option(fc.constantFrom(...contentTypes), { freq: 4 }),
      encoding: encodingArb,
      cookie: cookieArb,
      origin: originArb,
    })
    .map(({ method, path, body, contentType, encoding, cookie, origin }) => {
      const headers: OutgoingHttpHeaders = {};
      if (contentType !== null) headers['content-type'] = contentType;
      if (encoding) headers['content-encoding'] = encoding;
      if (cookie !== undefined) headers.cookie = cookie;
      if (origin) headers.origin = origin;
      return {
        method,
        path,
        headers,
        body: method === 'HEAD' ? undefined : body,
        withValidSession: cookie?.includes('VALID') ?? false,
      };
    });
}

/**
 * The known-nasty inputs, each sent once to the endpoints that read them, before the random
 * runs: every catalogued body to the routes with a body, every catalogued id to the routes
 * with an id, every catalogued cookie to the routes that read the session.
 */
export function catalogue(service: Service): HostileRequest[] {
  const json = { 'content-type': 'application/json' };
  const bodies = [
    ...craftedJsonTexts.map((text) => Buffer.from(text)),
    ...deeplyNestedBodies,
    ...invalidUtf8Bodies,
    ...nastyStrings.map((text) =>
      Buffer.from(
        JSON.stringify({ title: text, body: text, content: text, email: text, password: text }),
      ),
    ),
  ];
  const request = (
    method: string,
    path: string,
    headers: OutgoingHttpHeaders = {},
    body?: Buffer,
  ): HostileRequest => ({
    method,
    path,
    headers,
    body,
    withValidSession: String(headers.cookie ?? '').includes('VALID'),
  });
  if (service === 'auth') {
    return [
      ...bodies.map((body) => request('POST', '/api/login', json, body)),
      ...nastyCookies.flatMap((cookie) =>
        ['/api/me', '/dashboard', '/api/logout'].map((path) =>
          request(path === '/api/logout' ? 'POST' : 'GET', path, { cookie }),
        ),
      ),
    ];
  }
  return [
    ...bodies.flatMap((body) => [
      request('POST', '/notes', json, body),
      request('PUT', '/notes/1', json, body),
    ]),
    ...nastyIds.flatMap((id) => [
      request('GET', `/notes/${id}`),
      request('PUT', `/notes/${id}`, json, Buffer.from('{"title":"t","body":"b","content":"c"}')),
      request('DELETE', `/notes/${id}`),
    ]),
  ];
}
