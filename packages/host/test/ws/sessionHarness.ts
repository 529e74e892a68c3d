import { type ApiError, apiError, type Caller, type EngineEvent, type EngineService } from "@rfq/engine"
import { Clock, Effect, Either, Fiber, type Option, Queue, Schema } from "effect"
import type { TokenResponse } from "../../src/auth/AuthService.js"
import type { AuthenticatedCaller } from "../../src/auth/Tokens.js"
import type { Operation } from "../../src/Operations.js"
import { RateLimiter } from "../../src/RateLimiter.js"
import { CancelOnDisconnect } from "../../src/ws/CancelOnDisconnect.js"
import type { EventRenderer } from "../../src/ws/Channels.js"
import { makeSession } from "../../src/ws/Session.js"
import type { Session, SessionEnvironment } from "../../src/ws/SessionEnvironment.js"
import { SubscriptionHub } from "../../src/ws/SubscriptionHub.js"

/**
 * A session over a fake transport, with a fake auth service and a small operation table, for
 * protocol tests that need neither a database nor a socket. Replies and closes land in queues, so
 * a test waits for the next one instead of sleeping.
 */

export const HOUR = 3_600_000

export const callers = {
  taker: { deskId: 1, userId: 11, roles: ["trader"], clientId: "taker", tokenExpiresAt: HOUR },
  viewer: { deskId: 1, userId: 12, roles: ["viewer"], clientId: "viewer", tokenExpiresAt: HOUR },
  maker: {
    deskId: 2,
    userId: 21,
    roles: ["trader"],
    makerId: "maker-1",
    clientId: "maker",
    tokenExpiresAt: HOUR
  },
  makerShort: {
    deskId: 2,
    userId: 21,
    roles: ["trader"],
    makerId: "maker-1",
    clientId: "maker",
    tokenExpiresAt: 10_000
  },
  makerLate: {
    deskId: 2,
    userId: 21,
    roles: ["trader"],
    makerId: "maker-1",
    clientId: "maker",
    tokenExpiresAt: 2 * HOUR
  }
} satisfies Record<string, AuthenticatedCaller>

const tokens: Record<string, AuthenticatedCaller> = {
  "token-taker": callers.taker,
  "token-viewer": callers.viewer,
  "token-maker": callers.maker,
  "token-maker-short": callers.makerShort,
  "token-maker-late": callers.makerLate
}

const tokenResponse = (access: string, refresh?: string): TokenResponse => ({
  access_token: access,
  token_type: "Bearer",
  expires_in: 3600,
  ...(refresh === undefined ? {} : { refresh_token: refresh, refresh_expires_in: 1800 })
})

/** `token-expiring` is a maker token that expires 1.5 s after it is presented. */
export const EXPIRING_TOKEN_MS = 1_500

/**
 * The standing of each user as the fake auth reports it: absent is "may act". `cached: false`
 * makes `cachedStanding` answer "unknown", so the session takes the reading path (`checkStanding`).
 */
export interface Standings {
  readonly refusals: Map<number, ApiError>
  readonly uncached: Set<number>
  /** How many times `checkStanding` was asked (the "database" read). */
  reads: number
}

export const makeStandings = (): Standings => ({ refusals: new Map(), uncached: new Set(), reads: 0 })

export const fakeAuthWith = (standings: Standings): SessionEnvironment["auth"] => ({
  ...fakeAuth,
  cachedStanding: (caller) =>
    standings.uncached.has(caller.userId) ? "unknown" : standings.refusals.get(caller.userId),
  checkStanding: (caller) =>
    Effect.suspend(() => {
      standings.reads += 1
      const refusal = standings.refusals.get(caller.userId)
      return refusal === undefined ? Effect.void : Effect.fail(refusal)
    })
})

export const fakeAuth: SessionEnvironment["auth"] = {
  cachedStanding: () => undefined,
  checkStanding: () => Effect.void,
  verifyToken: (token) => {
    if (token === "token-expiring") {
      return Effect.map(Clock.currentTimeMillis, (now) => ({
        ...callers.maker,
        tokenExpiresAt: now + EXPIRING_TOKEN_MS
      }))
    }
    const caller = tokens[token]
    return caller === undefined ? Effect.fail(apiError("tokenExpiredOrInvalid")) : Effect.succeed(caller)
  },
  clientCredentials: (clientId, clientSecret) =>
    clientId === "maker" && clientSecret === "maker-secret"
      ? Effect.succeed(tokenResponse("token-maker"))
      : Effect.fail(apiError("invalidClientId")),
  refresh: (refreshToken, clientId) =>
    refreshToken === "refresh-1" && clientId === "maker"
      ? Effect.succeed(tokenResponse("token-maker-late", "refresh-2"))
      : Effect.fail(apiError("tokenExpiredOrInvalid"))
}

/** What the fake operations did, in order (to see interruption and cancel-on-disconnect order). */
export type Journal = Array<string>

const testOp = (
  rpc: string,
  access: Operation["access"],
  input: Schema.Schema<any, any>,
  run: Operation["run"]
): Operation => ({
  rpc,
  method: "POST",
  path: `/test/${rpc}`,
  from: "body",
  access,
  input,
  output: Schema.Unknown,
  summary: rpc,
  run
})

export const testOperations = (journal: Journal): ReadonlyArray<Operation> => [
  testOp("v1/test/echo", "read", Schema.Struct({ n: Schema.Number }), (_engine, caller, input) =>
    Effect.succeed({ n: input.n, userId: caller.userId })
  ),
  testOp("v1/test/blob", "read", Schema.Struct({ bytes: Schema.Number }), (_engine, _caller, input) =>
    Effect.succeed({ blob: "x".repeat(input.bytes) })
  ),
  // Memory answers an even `n` (`peek`, no fiber); an odd one runs (and yields: it needs a fiber).
  {
    ...testOp("v1/test/peek", "read", Schema.Struct({ n: Schema.Number }), (_engine, caller, input) =>
      Effect.as(Effect.yieldNow(), { n: input.n, userId: caller.userId, from: "run" })
    ),
    peek: (_engine, caller, input) =>
      input.n % 2 === 0 ? Either.right({ n: input.n, userId: caller.userId, from: "memory" }) : undefined
  },
  testOp("v1/test/write", "write", Schema.Struct({}), () => Effect.succeed({ written: true })),
  testOp("v1/test/account", "account", Schema.Struct({}), () => Effect.succeed([])),
  testOp("v1/test/missing", "read", Schema.Struct({}), () => Effect.fail(apiError("rfqNotFound"))),
  testOp("v1/test/defect", "read", Schema.Struct({}), () => Effect.die(new Error("boom"))),
  // What the SQL layer makes of a query while PostgreSQL is stopped: a defect wrapping the driver's error.
  testOp("v1/test/unreachable", "write", Schema.Struct({}), () =>
    Effect.die(
      new Error("Failed to execute statement", {
        cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })
      })
    )
  ),
  // Interrupted from inside: it waits on a fiber that something else interrupts (an owner's
  // entity stopped under a forwarded call), while the call's own fiber is not interrupted.
  testOp("v1/test/cut", "write", Schema.Struct({}), () =>
    Effect.flatMap(Effect.fork(Effect.never), (fiber) =>
      Effect.zipRight(Fiber.interrupt(fiber), Fiber.join(fiber))
    )
  ),
  testOp("v1/test/slow", "write", Schema.Struct({ ms: Schema.Number }), (_engine, _caller, input) =>
    Effect.sync(() => journal.push("slow started")).pipe(
      Effect.zipRight(Effect.sleep(input.ms)),
      Effect.zipRight(Effect.sync(() => journal.push("slow finished"))),
      Effect.onInterrupt(() => Effect.sync(() => journal.push("slow interrupted"))),
      Effect.as({ slept: input.ms })
    )
  )
]

/** A frame a session sent, parsed (notifications come as UTF-8 bytes, replies as text). */
export const parseFrame = (frame: string | Uint8Array): any =>
  JSON.parse(typeof frame === "string" ? frame : new TextDecoder("utf-8", { fatal: true }).decode(frame))

/** Renders `rfq.maker` RFQ events as `{event, rfqId}` for every caller. */
export const fakeRender: EventRenderer = (event, channel) =>
  channel === "rfq.maker" && event.type === "rfq"
    ? { event: event.event, rfqId: event.view.rfq.id }
    : undefined

export const rfqEvent = (
  rfqId: number,
  baseCurrency: "BTC" | "ETH",
  event: "created" | "updated" = "created"
) => ({ type: "rfq", event, seq: 1, view: { rfq: { id: rfqId, baseCurrency } } }) as unknown as EngineEvent

export interface Shared {
  readonly hub: SubscriptionHub
  readonly limiter: RateLimiter
  readonly cancelOnDisconnect: CancelOnDisconnect
  readonly cancelled: Array<Caller>
  readonly journal: Journal
  readonly standings: Standings
}

export const makeShared = (rateLimit = 1000): Shared => {
  const cancelled: Array<Caller> = []
  const journal: Journal = []
  return {
    hub: new SubscriptionHub(fakeRender),
    limiter: new RateLimiter(rateLimit),
    cancelOnDisconnect: new CancelOnDisconnect((caller) =>
      Effect.sync(() => {
        journal.push(`cancel ${caller.userId}`)
        cancelled.push(caller)
      })
    ),
    cancelled,
    journal,
    standings: makeStandings()
  }
}

export interface SessionOptions {
  readonly heartbeatTimeoutMs?: number
  readonly maxBatch?: number
  readonly maxPendingBytes?: number
}

export interface TestSession {
  readonly session: Session
  /** Sends a frame: a string as is, anything else as JSON. */
  readonly send: (message: unknown) => Effect.Effect<void>
  /** The next frame the session sent, parsed. */
  readonly next: Effect.Effect<any>
  /** Sends a request with a fresh id and answers its reply. */
  readonly call: (method: string, params?: unknown) => Effect.Effect<any>
  readonly nextClose: Effect.Effect<{ readonly code: number; readonly reason: string }>
  /** A close already requested, if any. */
  readonly pollClose: Effect.Effect<Option.Option<{ readonly code: number; readonly reason: string }>>
  readonly pending: Effect.Effect<number>
}

export const startSession = (shared: Shared, options: SessionOptions = {}): Effect.Effect<TestSession> =>
  Effect.gen(function* () {
    const outbox = yield* Queue.unbounded<any>()
    const closes = yield* Queue.unbounded<{ code: number; reason: string }>()
    const env: SessionEnvironment = {
      auth: fakeAuthWith(shared.standings),
      engine: {} as EngineService,
      operations: new Map(testOperations(shared.journal).map((op) => [op.rpc, op])),
      limiter: shared.limiter,
      hub: shared.hub,
      cancelOnDisconnect: shared.cancelOnDisconnect,
      heartbeatTimeoutMs: options.heartbeatTimeoutMs ?? 1_000_000_000,
      maxBatch: options.maxBatch ?? 100,
      maxPendingBytes: options.maxPendingBytes ?? 1_000_000
    }
    const session = yield* makeSession(
      {
        send: (frame) => Queue.unsafeOffer(outbox, parseFrame(frame)),
        close: (code, reason) => Queue.unsafeOffer(closes, { code, reason })
      },
      env
    )
    let id = 0
    const send = (message: unknown) =>
      session.receive(typeof message === "string" ? message : JSON.stringify(message))
    const next = Queue.take(outbox)
    const call = (method: string, params?: unknown) =>
      Effect.zipRight(
        send(
          params === undefined
            ? { jsonrpc: "2.0", id: ++id, method }
            : { jsonrpc: "2.0", id: ++id, method, params }
        ),
        next
      )
    return {
      session,
      send,
      next,
      call,
      nextClose: Queue.take(closes),
      pollClose: Queue.poll(closes),
      pending: Queue.size(outbox)
    } satisfies TestSession
  })

export const authenticated = (shared: Shared, token: string, options: SessionOptions = {}) =>
  Effect.gen(function* () {
    const s = yield* startSession(shared, options)
    const reply = yield* s.call("auth", { token })
    if (reply.result?.success !== true)
      return yield* Effect.dieMessage(`auth failed: ${JSON.stringify(reply)}`)
    return s
  })
