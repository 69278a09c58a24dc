/**
 * `http_request_duration_seconds`: a histogram of every request's duration by service, method,
 * route (its path template) and status, counted here and read by prom-client's registry at each
 * scrape. prom-client's own Histogram checks the labels and builds their key at every `observe`,
 * which cost a request about as much as everything else the metrics do together; here a request
 * finds its series through three map lookups (made once per series) and adds 1 to a bucket.
 *
 * The registry reads a metric through `get()` alone, for its text and for the sum of a cluster's
 * workers, so this object is registered beside prom-client's own metrics (see Metrics).
 */

/**
 * Request durations in seconds: from half a millisecond (a note read on a warm pool) to past twice
 * DB_TIMEOUT_MS's default.
 */
const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

type Labels = { service: string; method: string; route: string; status: string };

/**
 * One series: its labels, the count in each bucket (not cumulative; the last is past every bound),
 * the sum and the count.
 */
interface Series {
  labels: Labels;
  buckets: Float64Array;
  sum: number;
  count: number;
}

/** A sample as prom-client's registry reads it. */
interface Sample {
  metricName: string;
  labels: Labels & { le?: string | number };
  value: number;
}

export class RequestDurations {
  readonly name = 'http_request_duration_seconds';
  readonly help =
    'Time from a request to its answer, by service, method, route (its path template) and status';
  readonly type = 'histogram';
  /** A cluster's workers each count their own requests: the primary adds them up. */
  readonly aggregator = 'sum';
  // service → route → method → status → series.
  readonly #series = new Map<string, Map<string, Map<string, Map<number, Series>>>>();

  /**
   * The durations of `service`'s requests: each answered request is observed with its route,
   * method, status and duration.
   */
  of(service: string): (route: string, method: string, status: number, seconds: number) => void {
    const routes = new Map<string, Map<string, Map<number, Series>>>();
    this.#series.set(service, routes);
    return (route, method, status, seconds) => {
      let methods = routes.get(route);
      if (!methods) routes.set(route, (methods = new Map()));
      let statuses = methods.get(method);
      if (!statuses) methods.set(method, (statuses = new Map()));
      let series = statuses.get(status);
      if (!series) {
        series = {
          labels: { service, method, route, status: String(status) },
          buckets: new Float64Array(DURATION_BUCKETS.length + 1),
          sum: 0,
          count: 0,
        };
        statuses.set(status, series);
      }
      let bucket = 0;
      while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++;
      series.buckets[bucket]!++;
      series.sum += seconds;
      series.count++;
    };
  }

  /**
   * Every series as prom-client's registry reads a histogram: cumulative buckets (`le`), then the
   * sum and the count.
   */
  async get() {
    const values: Sample[] = [];
    for (const routes of this.#series.values()) {
      for (const methods of routes.values()) {
        for (const statuses of methods.values()) {
          for (const { labels, buckets, sum, count } of statuses.values()) {
            let below = 0;
            DURATION_BUCKETS.forEach((bound, index) => {
              below += buckets[index]!;
              values.push({
                metricName: `${this.name}_bucket`,
                labels: { ...labels, le: bound },
                value: below,
              });
            });
            values.push({
              metricName: `${this.name}_bucket`,
              labels: { ...labels, le: '+Inf' },
              value: count,
            });
            values.push({ metricName: `${this.name}_sum`, labels, value: sum });
            values.push({ metricName: `${this.name}_count`, labels, value: count });
          }
        }
      }
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    };
  }
}
