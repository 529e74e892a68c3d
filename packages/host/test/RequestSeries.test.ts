import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import client from "prom-client"
import { RequestSeries } from "../src/RequestSeries.js"

/** The exposition of `RequestSeries` is what prom-client's own Counter and Histogram expose. */

const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
const names = { counter: "t_requests_total", histogram: "t_request_duration_seconds" }
const help = { counter: "requests", histogram: "latency" }

const observation = fc.record({
  route: fc.constantFrom("/v1/rfq/{id}", "/v1/rfq", "unmatched", 'we"ird\\route'),
  method: fc.constantFrom("GET", "POST"),
  status: fc.constantFrom(200, 400, 404, 429, 500),
  // Bounds themselves included: a bucket's bound belongs to it (le).
  seconds: fc.oneof(fc.constantFrom(...BOUNDS, 0, 3), fc.double({ min: 0, max: 4, noNaN: true }))
})

describe("RequestSeries", () => {
  it("exposes exactly what prom-client's Counter and Histogram expose for the same requests", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (observations) => {
        const ours = new client.Registry()
        const series = new RequestSeries(names, help, BOUNDS)
        series.register(ours)
        const theirs = new client.Registry()
        const labelNames = ["route", "method", "status"] as const
        const counter = new client.Counter({
          name: names.counter,
          help: help.counter,
          labelNames,
          registers: [theirs]
        })
        const histogram = new client.Histogram({
          name: names.histogram,
          help: help.histogram,
          labelNames,
          buckets: BOUNDS,
          registers: [theirs]
        })
        for (const o of observations) {
          series.observe(o.route, o.method, o.status, o.seconds)
          const labels = { route: o.route, method: o.method, status: String(o.status) }
          counter.inc(labels)
          histogram.observe(labels, o.seconds)
        }
        expect(await ours.metrics()).toBe(await theirs.metrics())
      }),
      { numRuns: 60 }
    )
  })
})
