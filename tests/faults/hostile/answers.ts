import type { Reply } from '../../../harness/http.js';
import type { HostileRequest, Service } from './requests.js';

// What every answer to a hostile request must keep to, and what no request may change.

const prototypeNames = () => ({
  object: Object.getOwnPropertyNames(Object.prototype).sort(),
  array: Object.getOwnPropertyNames(Array.prototype).sort(),
  function: Object.getOwnPropertyNames(Function.prototype).sort(),
});
const pristine = prototypeNames();
export const polluted = () =>
  (({}) as Record<string, unknown>).polluted !== undefined ||
  ({} as Record<string, unknown>).role !== undefined ||
  JSON.stringify(prototypeNames()) !== JSON.stringify(pristine);

export interface Problem {
  /**
   * Method, path with its digits blanked, and the answer's status: one example of each is reported.
   */
  kind: string;
  text: string;
}

export function distinct(problems: Problem[]): string[] {
  return [...new Map(problems.map((problem) => [problem.kind, problem.text])).values()];
}

/**
 * Why an answer breaks the rules, or undefined when it keeps them. Pages and files of the login
 * service are held to the same rule: what no route takes is answered in the API's shape too.
 */
export function problemWith(
  service: Service,
  request: HostileRequest,
  response: Reply,
): string | undefined {
  if (response.status >= 500) return `answered ${response.status}: ${response.text.slice(0, 200)}`;
  if (response.status < 400 || request.method === 'HEAD') return undefined;
  // Answered by Node's HTTP parser (431 for an oversized header block), never by the app.
  if (response.status === 431 && response.body.length === 0) return undefined;
  const contentType = String(response.headers['content-type'] ?? '');
  if (!contentType.startsWith('application/json'))
    return `${response.status} with content type "${contentType}"`;
  const body = response.json as Record<string, unknown> | undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return `${response.status} body is not an object`;
  const keys = Object.keys(body);
  if (service === 'notes8000') {
    const { detail } = body;
    const entriesOk =
      Array.isArray(detail) &&
      detail.every(
        (entry: Record<string, unknown>) =>
          typeof entry?.type === 'string' &&
          Array.isArray(entry.loc) &&
          typeof entry.msg === 'string',
      );
    if (keys.length !== 1 || (typeof detail !== 'string' && !entriesOk))
      return `${response.status} not {detail}: ${JSON.stringify(body).slice(0, 200)}`;
  } else if (keys.length !== 1 || typeof body.error !== 'string' || body.error === '') {
    return `${response.status} not {error}: ${JSON.stringify(body).slice(0, 200)}`;
  }
  return undefined;
}
