import { Cause, Effect, Exit, Option } from "effect"
import client from "prom-client"
import type { ApiError } from "@rfq/engine"
import type { AnyAround, AroundNow } from "./RouteDispatch.js"
import { RequestSeries } from "./RequestSeries.js"
import { type Route, type RouteRequest, type RouteResponse, makeRouter, route } from "./Router.js"

/**
 * Prometheus metrics (`GET /metrics`, text exposition format): requests and latency per route and
 * status, open RFQs, WebSocket sessions, venue calls by outcome, plus Node's default process
 * metrics. Routes are labelled by their pattern (`/v1/rfq/{id}`), never the raw path, so the
 * label set stays bounded.
 */
export class Metrics {
  readonly registry = new client.Registry()
  /** Requests and their latency by route, method and status (counted without prom-client's per-call hashing). */
  readonly requests = new RequestSeries(
    { counter: "rfq_http_requests_total", histogram: "rfq_http_request_duration_seconds" },
    {
      counter: "HTTP requests by route, method and status",
      histogram: "HTTP request latency by route, method and status"
    },
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
  )
  readonly venueCalls = new client.Counter({
    name: "rfq_venue_calls_total",
    help: "Venue calls by venue, operation and outcome",
    labelNames: ["venue", "operation", "outcome"] as const,
    registers: [this.registry]
  })
  readonly secretChecks = new client.Counter({
    name: "rfq_client_secret_checks_total",
    help: "Client secrets verified (one scrypt each) by outcome; refused guesses never reach it",
    labelNames: ["outcome"] as const,
    registers: [this.registry]
  })
  openRfqs: () => number = () => 0
  webSocketSessions: () => number = () => 0

  constructor() {
    const self = this
    this.requests.register(this.registry)
    new client.Gauge({
      name: "rfq_open_rfqs",
      help: "RFQs open (or settling) in the engine",
      registers: [this.registry],
      collect() {
        this.set(self.openRfqs())
      }
    })
    new client.Gauge({
      name: "rfq_websocket_sessions",
      help: "Open WebSocket sessions",
      registers: [this.registry],
      collect() {
        this.set(self.webSocketSessions())
      }
    })
    client.collectDefaultMetrics({ register: this.registry })
  }

  readonly onSecretVerified = (matched: boolean) => {
    this.secretChecks.inc({ outcome: matched ? "match" : "mismatch" })
  }

  readonly onVenueCall = (venue: string, operation: string, outcome: string) => {
    this.venueCalls.inc({ venue, operation, outcome })
  }

  /** Times every request, labelled by the route pattern it matched (or `unmatched`). */
  around<R>(routes: ReadonlyArray<Route<R>>): AnyAround {
    const router = makeRouter(routes)
    const patternOf = (request: RouteRequest) => {
      if (request.route !== undefined) return request.route
      const match = router.match(request.method, request.path)
      return match._tag === "Found" ? match.route.path : "unmatched"
    }
    const count = (request: RouteRequest, status: number, start: number) =>
      this.requests.observe(patternOf(request), request.method, status, (performance.now() - start) / 1000)
    const timed = <R2>(request: RouteRequest, next: Effect.Effect<RouteResponse, ApiError, R2>) => {
      const start = performance.now()
      return Effect.onExit(next, (exit) => {
        // An interrupted request (client gone, shutdown) has no answer to count; a defect is a 500.
        if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) return Effect.void
        const status = Exit.isSuccess(exit)
          ? exit.value.status
          : Option.match(Cause.failureOption(exit.cause), { onNone: () => 500, onSome: (e) => e.status })
        count(request, status, start)
        return Effect.void
      })
    }
    const now: AroundNow = (request, next) => {
      const start = performance.now()
      const answer = next()
      if (answer !== undefined) count(request, answer.status, start)
      return answer
    }
    return Object.assign(timed, { now })
  }

  route(): Route<never> {
    return route("GET", "/metrics", () =>
      Effect.promise(() => this.registry.metrics()).pipe(
        Effect.map((text) => ({
          status: 200,
          body: null,
          text,
          headers: { "content-type": this.registry.contentType }
        }))
      )
    )
  }
}
