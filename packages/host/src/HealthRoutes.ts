import { apiError } from "@rfq/engine"
import { Duration, Effect } from "effect"
import { errorResponse } from "./ErrorTable.js"
import { type Route, route } from "./Router.js"

/**
 * A readiness probe slower than this counts as a failure: an orchestrator must get an answer, and
 * `/readyz` promises one within 2 s. The probe gives up at 1.5 s, leaving the rest for a busy
 * machine; a stalled probe's statement is abandoned at once (see the engine's `GuardedPool`).
 */
export const READINESS_TIMEOUT = Duration.millis(1500)

/**
 * `GET /healthz` (the process answers) and `GET /readyz` (the database answers). Neither needs a
 * token. `readiness` is the database ping; any failure, defect or timeout means not ready.
 */
export const healthRoutes = (readiness: Effect.Effect<void, unknown>): ReadonlyArray<Route<never>> => [
  route("GET", "/healthz", () => Effect.succeed({ status: 200, body: { status: "ok" } })),
  route("GET", "/readyz", () =>
    readiness.pipe(
      Effect.timeoutFail({ duration: READINESS_TIMEOUT, onTimeout: () => "timeout" }),
      Effect.sandbox,
      Effect.as({ status: 200, body: { status: "ready" } }),
      Effect.catchAll((cause) =>
        Effect.logWarning("readiness probe failed", cause).pipe(
          Effect.as(errorResponse(apiError("serviceUnavailable", "database is not reachable")))
        )
      )
    )
  )
]
