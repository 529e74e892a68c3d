import { Data, Duration, Effect, FiberId, FiberSet, Scope } from "effect"
import uWS from "uWebSockets.js"
import { makeRequestHandler } from "./RequestHandler.js"
import type { Around } from "./RouteDispatch.js"
import { makeRouter, type Route } from "./Router.js"

export interface HttpServerOptions<R> {
  readonly host: string
  /** 0 picks a free port; the bound one is in the result. */
  readonly port: number
  readonly routes: ReadonlyArray<Route<R>>
  readonly around?: Around<NoInfer<R>>
  readonly maxBodyBytes?: number
  /** How long shutdown waits for requests in flight before interrupting them. Default 10 s. */
  readonly drainTimeout?: Duration.DurationInput
}

export interface HttpServer {
  readonly host: string
  readonly port: number
  /** `http://host:port`, with an IPv6 host in brackets. */
  readonly url: string
  /** The uWS app, for what the route table does not cover (the WebSocket endpoint). */
  readonly app: uWS.TemplatedApp
  /** Requests in flight: from their first byte until answered or their client is gone. */
  readonly inFlight: { readonly size: number }
}

export class ListenFailed extends Data.TaggedError("ListenFailed")<{ readonly message: string }> {}

/**
 * Serves the route table on uWebSockets.js for the lifetime of the scope. Handlers run on the
 * runtime of the calling fiber (captured once), so they see its services, logger and log level.
 * Closing the scope stops accepting connections, answers new requests on open connections with 503,
 * waits for the requests in flight (up to `drainTimeout`) and interrupts what is left.
 */
export const serve = <R>(
  options: HttpServerOptions<R>
): Effect.Effect<HttpServer, ListenFailed, R | Scope.Scope> =>
  Effect.gen(function* () {
    const router = makeRouter(options.routes)
    // One fiber per request, tracked until it ends. The set is not tied to this scope: its
    // finalizer would wait, without a bound, for a request that does not stop when interrupted;
    // the drain below interrupts what is left itself and waits for it 2 s at most.
    const requests = yield* FiberSet.make<unknown, never>().pipe(Scope.extend(yield* Scope.make()))
    const runFork = yield* FiberSet.runtime(requests)<R>()
    const inFlight = {
      get size() {
        return Effect.runSync(FiberSet.size(requests))
      }
    }
    let draining = false
    const handler = makeRequestHandler({
      router,
      runFork,
      isDraining: () => draining,
      ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
      ...(options.around === undefined ? {} : { around: options.around })
    })
    const app = uWS.App().any("/*", handler)

    const listenSocket = yield* Effect.acquireRelease(
      Effect.async<uWS.us_listen_socket, ListenFailed>((resume) => {
        app.listen(options.host, options.port, (socket) => {
          resume(
            socket === false
              ? Effect.fail(
                  new ListenFailed({
                    message: `cannot listen on ${options.host}:${options.port} (port in use or address not available)`
                  })
                )
              : Effect.succeed(socket)
          )
        })
      }),
      (socket) =>
        Effect.gen(function* () {
          draining = true
          uWS.us_listen_socket_close(socket)
          const pending = yield* FiberSet.size(requests)
          if (pending > 0)
            yield* Effect.logInfo("draining requests in flight").pipe(Effect.annotateLogs({ pending }))
          const drained = yield* FiberSet.awaitEmpty(requests).pipe(
            Effect.timeoutTo({
              duration: options.drainTimeout ?? Duration.seconds(10),
              onSuccess: () => true,
              onTimeout: () => false
            })
          )
          if (!drained) {
            yield* Effect.logWarning("drain deadline passed; interrupting requests").pipe(
              Effect.annotateLogs({ pending: yield* FiberSet.size(requests) })
            )
            for (const request of requests) request.unsafeInterruptAsFork(FiberId.none)
            yield* FiberSet.awaitEmpty(requests).pipe(Effect.timeout(Duration.seconds(2)), Effect.ignore)
          }
        })
    )

    const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket)
    const hostPart = options.host.includes(":") ? `[${options.host}]` : options.host
    return { host: options.host, port, url: `http://${hostPart}:${port}`, app, inFlight }
  })
