import type { ApiError, EngineService } from "@rfq/engine"
import type { Effect } from "effect"
import type { AuthService } from "../auth/AuthService.js"
import type { AuthenticatedCaller } from "../auth/Tokens.js"
import type { Operation } from "../Operations.js"
import type { RateLimit } from "../RateLimiter.js"
import type { CancelOnDisconnectService } from "./CancelOnDisconnect.js"
import type { SubscriptionHub } from "./SubscriptionHub.js"

/** The session's contract with its surroundings: what it needs, what it offers, how it ends. */

/** What a session needs of its connection; the uWS adapter and the tests' fake both provide it. */
export interface SessionTransport {
  /**
   * Sends one text frame at once (never waits; the transport enforces its own buffer cap). A frame
   * given as bytes (UTF-8) is only valid during the call: the transport copies it if it keeps it.
   */
  readonly send: (frame: string | Uint8Array) => void
  /** Ends the connection with a close frame; the transport then runs `Session.closed`. */
  readonly close: (code: number, reason: string) => void
  /** The peer's address (limits of failed client-secret checks). */
  readonly remoteAddress?: string | undefined
}

export interface SessionEnvironment {
  readonly auth: Pick<
    AuthService,
    "verifyToken" | "clientCredentials" | "refresh" | "cachedStanding" | "checkStanding"
  >
  readonly engine: EngineService
  /** The shared operation table by JSON-RPC method name. */
  readonly operations: ReadonlyMap<string, Operation>
  /**
   * Per user, shared by all sessions of the endpoint (`WS_RATE_LIMIT_PER_MINUTE`), and by all hosts
   * in multi-host mode.
   */
  readonly limiter: RateLimit
  readonly hub: SubscriptionHub
  readonly cancelOnDisconnect: CancelOnDisconnectService
  readonly heartbeatTimeoutMs: number
  readonly maxBatch: number
  /** Frames received but not yet answered, in bytes of text; past it the connection is closed. */
  readonly maxPendingBytes: number
}

export const CloseCode = {
  normal: 1000,
  goingAway: 1001,
  policyViolation: 1008,
  heartbeatTimeout: 4000,
  tokenExpired: 4001,
  backpressure: 4002,
  /** The session's token was revoked (refresh-token replay) or its client or user deactivated. */
  revoked: 4003
} as const

/** The close reason of a revocation: the refusal REST gives the same token. */
export const revokedReason = (error: ApiError): string =>
  error.key === "accountInactive" ? "account is inactive" : "token revoked"

export interface Session {
  /**
   * A frame from the client. Decodes and parses it before returning (so a transport may pass a
   * view of a buffer it reuses), then queues it: frames are handled one at a time, in order.
   */
  readonly receive: (frame: string | Uint8Array) => Effect.Effect<void>
  /**
   * `receive` without an Effect, for the transport's callback: a call whose reply needs no fiber
   * (a heartbeat, a refusal) is answered before it returns.
   */
  readonly receiveNow: (frame: string | Uint8Array) => void
  /**
   * The connection has ended, for whatever reason. Stops the timers, drops the subscriptions,
   * interrupts the call in progress and waits for it, then runs cancel-on-disconnect (so no call
   * of this session can create a quote after the cancel).
   */
  readonly closed: Effect.Effect<void>
  /** The identity the session acts as, once authenticated. */
  readonly caller: () => AuthenticatedCaller | undefined
  /**
   * The session's token or account no longer stands (found by the endpoint's recheck): the session
   * is closed with 4003 at once, as when a call finds it out first.
   */
  readonly revoke: (error: ApiError) => void
}
