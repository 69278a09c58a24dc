/**
 * The Lua script wrk runs for one load: its method, headers and body, the ids `/notes/{id}` names
 * request after request, and a `done` function that prints what the run measured as one line of
 * JSON (wrk's own text goes before it).
 */

/** Reads and updates: the ids of a list, over and over. */
export interface CycledIds {
  cycle: number[];
}

/**
 * Deletes: each request a note of its own, from a range seeded for them, taken in order across the
 * runs of a load (its warm-up, then the measured run). Past the end, requests name the last id
 * again.
 */
export class SeededIds {
  #taken = 0;
  private constructor(
    readonly first: number,
    readonly last: number,
  ) {}

  /**
   * The ids of notes inserted by one statement, with nothing else inserting meanwhile: one unbroken
   * range.
   */
  static of(ids: number[]): SeededIds {
    const first = ids[0]!;
    const last = ids.at(-1)!;
    if (ids.length === 0 || last - first + 1 !== ids.length)
      throw new Error('the notes seeded for deletes do not have consecutive ids');
    return new SeededIds(first, last);
  }

  get next(): number {
    return this.first + this.#taken;
  }

  took(count: number): void {
    this.#taken += count;
  }

  /** Requests that found no seeded note left. */
  get shortBy(): number {
    return Math.max(0, this.#taken - (this.last - this.first + 1));
  }
}

export interface ScriptedLoad {
  method: string;
  /** The path, or its template (`/notes/{id}`) that `ids` fills in. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  ids?: CycledIds | SeededIds;
}

/** What the script's `done` prints; times in microseconds. */
export interface WrkOutput {
  durationUs: number;
  requests: number;
  connectErrors: number;
  readErrors: number;
  writeErrors: number;
  timeouts: number;
  /** Answers whose status is not 2xx (wrk's own count starts at 400). */
  non2xx: number;
  p50Us: number;
  p99Us: number;
  meanUs: number;
  /** Ids the requests took (wrk also builds one request before the run to check it). */
  taken: number;
}

/**
 * A Lua string literal of `text`'s UTF-8 bytes, all but printable ASCII escaped (`\ddd`: three
 * digits, so that no digit after it is read as part of it).
 */
function luaString(text: string): string {
  const bytes = [...Buffer.from(text, 'utf8')];
  const printable = (byte: number) => byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c;
  const escaped = bytes.map((byte) =>
    printable(byte) ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`,
  );
  return `"${escaped.join('')}"`;
}

function requestFunction(path: string, ids: CycledIds | SeededIds): string {
  const [before, after] = path.split('{id}').map(luaString);
  const id =
    ids instanceof SeededIds
      ? `math.min(${ids.next} + taken - 1, ${ids.last})`
      : `cycle[(taken - 1) % #cycle + 1]`;
  return [
    ...(ids instanceof SeededIds ? [] : [`local cycle = {${ids.cycle.join(', ')}}`]),
    'request = function()',
    '  taken = taken + 1',
    `  return wrk.format(nil, ${before} .. ${id} .. ${after})`,
    'end',
  ].join('\n');
}

const DONE = `
local threads = {}
setup = function(thread) table.insert(threads, thread) end
done = function(summary, latency)
  local non2xx, taken = 0, 0
  for _, thread in ipairs(threads) do
    non2xx = non2xx + thread:get("non2xx")
    taken = taken + thread:get("taken")
  end
  local e = summary.errors
  io.write(string.format('\\n{"durationUs":%d,"requests":%d,"connectErrors":%d,"readErrors":%d,' ..
    '"writeErrors":%d,"timeouts":%d,"non2xx":%d,"p50Us":%d,"p99Us":%d,"meanUs":%f,"taken":%d}\\n',
    summary.duration, summary.requests, e.connect, e.read, e.write, e.timeout, non2xx,
    latency:percentile(50), latency:percentile(99), latency.mean, taken))
end`;

export function wrkScript({ method, path, headers, body, ids }: ScriptedLoad): string {
  return [
    `wrk.method = ${luaString(method)}`,
    ...Object.entries(headers).map(
      ([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`,
    ),
    ...(body === undefined ? [] : [`wrk.body = ${luaString(body)}`]),
    'taken = 0',
    // Without a request function wrk builds the request once and sends it as it is.
    ids ? requestFunction(path, ids) : `wrk.path = ${luaString(path)}`,
    'non2xx = 0',
    'response = function(status)',
    '  if status < 200 or status > 299 then non2xx = non2xx + 1 end',
    'end',
    DONE,
  ].join('\n');
}
