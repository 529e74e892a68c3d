import type client from "prom-client"

/**
 * The request counter and latency histogram of `Metrics.ts`, counted in plain numbers per label
 * set and published through prom-client's registry as two collected metrics (`registerMetric`).
 *
 * Ours, not prom-client's `Counter` and `Histogram`: those validate and hash the label set on every
 * `inc` and `observe` (`labels()` children too), which was a tenth of the host's CPU on the read
 * path. Here a label set is looked up once per route, method and status and counted with a few
 * additions; the exposition text is prom-client's own, made at scrape time.
 */

interface Series {
  readonly labels: Readonly<Record<"route" | "method" | "status", string>>
  count: number
  sum: number
  /** Per bucket, not cumulative; one more than `bounds` for +Inf. */
  readonly buckets: Float64Array
}

export class RequestSeries {
  /** By route, method and status: no key text is made per request. */
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>()
  /** Every series, in the order they first counted (the exposition's order, as prom-client's). */
  private readonly all: Array<Series> = []

  constructor(
    private readonly names: { readonly counter: string; readonly histogram: string },
    private readonly help: { readonly counter: string; readonly histogram: string },
    /** Upper bounds in seconds, ascending. */
    private readonly bounds: ReadonlyArray<number>
  ) {}

  /** Counts one request of `route` (its pattern), `method` and `status` that took `seconds`. */
  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.byRoute.get(route)
    if (byMethod === undefined) {
      byMethod = new Map()
      this.byRoute.set(route, byMethod)
    }
    let byStatus = byMethod.get(method)
    if (byStatus === undefined) {
      byStatus = new Map()
      byMethod.set(method, byStatus)
    }
    let series = byStatus.get(status)
    if (series === undefined) {
      series = {
        labels: { route, method, status: String(status) },
        count: 0,
        sum: 0,
        buckets: new Float64Array(this.bounds.length + 1)
      }
      byStatus.set(status, series)
      this.all.push(series)
    }
    series.count++
    series.sum += seconds
    let bucket = 0
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket++
    series.buckets[bucket]!++
  }

  /** Adds both metrics to `registry`. */
  register(registry: client.Registry): void {
    const all = () => this.all
    registry.registerMetric(
      this.metric(this.names.counter, this.help.counter, "counter", () =>
        all().map((s) => ({ labels: s.labels, value: s.count }))
      )
    )
    registry.registerMetric(
      this.metric(this.names.histogram, this.help.histogram, "histogram", () =>
        all().flatMap((s) => {
          const name = this.names.histogram
          const values: Array<{
            labels: Record<string, string | number>
            value: number
            metricName: string
          }> = []
          let cumulative = 0
          this.bounds.forEach((le, i) => {
            cumulative += s.buckets[i]!
            values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${name}_bucket` })
          })
          values.push(
            { labels: { le: "+Inf", ...s.labels }, value: s.count, metricName: `${name}_bucket` },
            { labels: s.labels, value: s.sum, metricName: `${name}_sum` },
            { labels: s.labels, value: s.count, metricName: `${name}_count` }
          )
          return values
        })
      )
    )
  }

  private metric(
    name: string,
    help: string,
    type: "counter" | "histogram",
    values: () => ReadonlyArray<{ labels: object; value: number; metricName?: string }>
  ) {
    const get = async () => ({ name, help, type, aggregator: "sum", values: values() })
    return {
      name,
      help,
      type,
      aggregator: "sum",
      get,
      reset: () => this.byRoute.clear()
    } as unknown as client.Metric
  }
}
