import { Buffer } from "node:buffer"
import { type Caller, Engine, Events, MmpNotices } from "@rfq/engine"
import { Duration, Effect, FiberSet, Option, Runtime, Scope } from "effect"
import uWS from "uWebSockets.js"
import { Auth } from "../auth/AuthService.js"
import type { HostConfig } from "../Config.js"
import type { HostInput } from "../Host.js"
import type { HttpServer } from "../HttpServer.js"
import { operations as allOperations, type Operation } from "../Operations.js"
import { RateLimiter } from "../RateLimiter.js"
import { MAX_BODY_BYTES } from "../RequestHandler.js"
import { SharedState } from "../shared/SharedState.js"
import { CancelOnDisconnect, type CancelOnDisconnectService } from "./CancelOnDisconnect.js"
import { DEFAULT_MAX_BATCH } from "./JsonRpc.js"
import { DEFAULT_REVOCATION_CHECK_MS, watchRevocations } from "./RevocationWatch.js"
import { makeSession } from "./Session.js"
import { CloseCode, type Session, type SessionEnvironment } from "./SessionEnvironment.js"
import { SubscriptionHub } from "./SubscriptionHub.js"

export interface WebSocketEndpointOptions {
  /** Contract: `/ws/v1`, with `/ws` as an alias. */
  readonly paths?: ReadonlyArray<string>
  readonly heartbeatTimeoutMs: number
  readonly rateLimitPerMinute: number
  /** Unsent output a socket may hold; a send that finds more is refused and the socket ended with 4002. */
  readonly maxBackpressureBytes: number
  /** Largest frame accepted; uWS closes the connection on a larger one (default 1 MiB, as REST). */
  readonly maxPayloadBytes?: number
  readonly maxBatch?: number
  /** Received but unanswered frames a session may hold (default 4 MiB of text). */
  readonly maxPendingBytes?: number
  readonly operations?: ReadonlyArray<Operation>
  /** How long shutdown waits for sessions to wind up (cancel-on-disconnect included). Default 10 s. */
  readonly closeTimeout?: Duration.DurationInput
  /** How often open sessions are checked for revoked tokens and deactivated accounts (default 1 s). */
  readonly revocationCheckMs?: number
}

export interface WebSocketEndpoint {
  /** Open connections. */
  readonly connections: () => number
  /** How many connections ended with each close code so far (for metrics and tests). */
  readonly closeCodes: () => ReadonlyMap<number, number>
  readonly hub: SubscriptionHub
  readonly cancelOnDisconnect: CancelOnDisconnectService
}

/** Set at upgrade; everything the socket needs later lives here (uWS's `req` dies with the callback). */
interface SocketData {
  readonly remoteAddress: string
  readonly path: string
  session: Session | undefined
  closed: boolean
}

export const webSocketOptions = (config: HostConfig): WebSocketEndpointOptions => ({
  heartbeatTimeoutMs: config.wsHeartbeatTimeoutMs,
  rateLimitPerMinute: config.wsRateLimitPerMinute,
  maxBackpressureBytes: config.wsMaxBackpressureBytes
})

/**
 * The JSON-RPC WebSocket endpoint on a uWS app, for the lifetime of the scope: binds the
 * transport-agnostic `Session` to uWS sockets (the way graphql-ws binds its server), feeds one
 * shared subscription hub from the engine, and on shutdown refuses new upgrades, closes every
 * socket with 1001 and waits for the sessions to wind up (cancel-on-disconnect runs then, while
 * the engine is still up).
 *
 * No exception reaches a uWS callback: each is wrapped, logged, and the socket closed with 1011.
 * Back-pressure is per socket: sends never wait; a socket whose unsent output passes
 * `maxBackpressureBytes` is ended with 4002 `backpressure limit exceeded`, and nobody else notices.
 */
export const attachWebSocket = (
  app: uWS.TemplatedApp,
  options: WebSocketEndpointOptions
): Effect.Effect<WebSocketEndpoint, never, Engine | Events | Auth | Scope.Scope> =>
  Effect.gen(function* () {
    const engine = yield* Engine
    const auth = yield* Auth
    const runtime = yield* Effect.runtime<never>()
    const runSync = Runtime.runSync(runtime)
    const runFork = Runtime.runFork(runtime)

    const hub = new SubscriptionHub()
    yield* hub.run((yield* Events).subscribeFor(hub.wants))
    // Market-maker protection's trips and thaws (`mmp.maker`); an engine stand-in may have none.
    const mmpNotices = yield* Effect.serviceOption(MmpNotices)
    if (Option.isSome(mmpNotices)) yield* hub.run(mmpNotices.value.subscribe)

    const cancelQuotes = (caller: Caller) =>
      caller.makerId === undefined
        ? Effect.void
        : engine.cancelAllQuotes(caller, {}, { onlyUser: true }).pipe(
            Effect.tap((result) =>
              Effect.logInfo("cancel-on-disconnect").pipe(
                Effect.annotateLogs({ userId: caller.userId, cancelledCount: result.cancelledCount })
              )
            ),
            Effect.catchAllCause((cause) => Effect.logError("cancel-on-disconnect failed", cause)),
            Effect.asVoid
          )
    // One host counts here; several hosts count a user's sessions together (`SharedState`).
    const shared = yield* Effect.serviceOption(SharedState)
    const cancelOnDisconnect = Option.isSome(shared)
      ? yield* shared.value.cancelOnDisconnect(cancelQuotes)
      : new CancelOnDisconnect(cancelQuotes)

    const env: SessionEnvironment = {
      auth,
      engine,
      operations: new Map((options.operations ?? allOperations).map((op) => [op.rpc, op])),
      limiter: Option.isSome(shared)
        ? shared.value.rateLimit("ws", options.rateLimitPerMinute)
        : new RateLimiter(options.rateLimitPerMinute),
      hub,
      cancelOnDisconnect,
      heartbeatTimeoutMs: options.heartbeatTimeoutMs,
      maxBatch: options.maxBatch ?? DEFAULT_MAX_BATCH,
      maxPendingBytes: options.maxPendingBytes ?? 4 * MAX_BODY_BYTES
    }

    const sockets = new Set<uWS.WebSocket<SocketData>>()
    const closeCodes = new Map<number, number>()
    // The sessions winding up. The set is not tied to this scope: its finalizer would wait,
    // without a bound, for a wind-up (uninterruptible) that does not end; shutdown waits for them
    // `closeTimeout` at most instead.
    const closing = yield* FiberSet.make<void, never>().pipe(Scope.extend(yield* Scope.make()))
    const runClosing = yield* FiberSet.runtime(closing)<never>()
    let shuttingDown = false

    // Whatever ends a token or a client ends its open sessions too (4003), idle ones included.
    yield* Effect.forkScoped(
      watchRevocations({
        sessions: function* () {
          for (const ws of sockets) {
            const session = ws.getUserData().session
            if (session !== undefined) yield session
          }
        },
        auth,
        intervalMs: options.revocationCheckMs ?? DEFAULT_REVOCATION_CHECK_MS
      })
    )

    const logDefect = (where: string, error: unknown) =>
      runFork(Effect.logError(`WebSocket ${where} failed`, error))

    /** Ends the socket with a close frame; uWS calls the close handler at once. */
    const endSocket = (ws: uWS.WebSocket<SocketData>, code: number, reason: string) => {
      const data = ws.getUserData()
      if (data.closed) return
      try {
        ws.end(code, reason)
      } catch (error) {
        logDefect("end", error)
      }
    }

    // Checked before each send, not after: one reply larger than the cap still goes out whole,
    // and a socket is cut off only when more output finds the earlier output still unsent. uWS's
    // own limit is off (it would drop the close frame too); ours queues the 4002 close frame
    // behind the data, so a client that resumes reading soon learns why it was cut off. uWS
    // force-closes an ended socket that has not drained at its next timeout tick (within about
    // 4 s), and such a client sees an abnormal closure (1006) instead.
    // A send corks the socket by itself (one write per frame) unless another socket is corked.
    // `data` is the socket's user data, passed in: reading it from uWS costs a native call per send.
    const sendTo = (ws: uWS.WebSocket<SocketData>, data: SocketData, frame: string | Uint8Array) => {
      if (data.closed) return
      const buffered = ws.getBufferedAmount()
      if (buffered > options.maxBackpressureBytes) {
        runFork(
          Effect.logWarning("WebSocket cut off: the client stopped reading").pipe(
            Effect.annotateLogs({ buffered, remoteAddress: data.remoteAddress })
          )
        )
        return endSocket(ws, CloseCode.backpressure, "backpressure limit exceeded")
      }
      ws.send(frame, false)
    }

    const behavior: uWS.WebSocketBehavior<SocketData> = {
      compression: uWS.DISABLED,
      maxPayloadLength: options.maxPayloadBytes ?? MAX_BODY_BYTES,
      maxBackpressure: 0,
      // The session's heartbeat rule closes idle sockets with the contract's code; uWS stays out.
      idleTimeout: 0,
      sendPingsAutomatically: false,
      upgrade: (res, req, context) => {
        try {
          const key = req.getHeader("sec-websocket-key")
          const protocol = req.getHeader("sec-websocket-protocol")
          const extensions = req.getHeader("sec-websocket-extensions")
          const path = req.getUrl()
          if (shuttingDown) {
            res.cork(() => {
              res.writeStatus("503 Service Unavailable").end("server shutting down", true)
            })
            return
          }
          const data: SocketData = {
            remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
            path,
            session: undefined,
            closed: false
          }
          res.upgrade(data, key, protocol, extensions, context)
        } catch (error) {
          logDefect("upgrade", error)
          try {
            res.close()
          } catch {}
        }
      },
      open: (ws) => {
        try {
          sockets.add(ws)
          const data = ws.getUserData()
          data.session = runSync(
            makeSession(
              {
                send: (frame) => sendTo(ws, data, frame),
                close: (code, reason) => endSocket(ws, code, reason),
                remoteAddress: data.remoteAddress
              },
              env
            )
          )
        } catch (error) {
          logDefect("open", error)
          endSocket(ws, 1011, "internal error")
        }
      },
      message: (ws, message) => {
        try {
          const session = ws.getUserData().session
          // Parsed before receiveNow returns: uWS neuters the buffer after this callback.
          if (session !== undefined) session.receiveNow(new Uint8Array(message))
        } catch (error) {
          logDefect("message", error)
          endSocket(ws, 1011, "internal error")
        }
      },
      close: (ws, code) => {
        try {
          closeCodes.set(code, (closeCodes.get(code) ?? 0) + 1)
          const data = ws.getUserData()
          data.closed = true
          sockets.delete(ws)
          runFork(
            Effect.logDebug("WebSocket closed").pipe(
              Effect.annotateLogs({ code, path: data.path, remoteAddress: data.remoteAddress })
            )
          )
          if (data.session === undefined) return
          runClosing(data.session.closed)
        } catch (error) {
          logDefect("close", error)
        }
      }
    }
    for (const path of options.paths ?? ["/ws/v1", "/ws"]) app.ws(path, behavior)

    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        shuttingDown = true
        for (const ws of [...sockets]) endSocket(ws, CloseCode.goingAway, "server shutting down")
        yield* FiberSet.awaitEmpty(closing).pipe(
          Effect.timeout(options.closeTimeout ?? Duration.seconds(10)),
          Effect.catchAll(() => Effect.logWarning("WebSocket sessions did not wind up in time")),
          Effect.asVoid
        )
      })
    )

    return { connections: () => sockets.size, closeCodes: () => closeCodes, hub, cancelOnDisconnect }
  })

/** The host's `onListening` hook: the endpoint on the server's app with the configured limits. */
export const webSocketOnListening = (
  input: HostInput,
  server: HttpServer
): Effect.Effect<void, never, Engine | Events | Auth | Scope.Scope> =>
  Effect.asVoid(attachWebSocket(server.app, webSocketOptions(input.config)))
