import * as path from "node:path"
import { Data, Effect, type Layer, Logger, Option, type Scope } from "effect"
import { ClusterUnavailable } from "./ClusterConfig.js"
import { type HostConfig, InvalidConfiguration, loadHostConfig } from "./Config.js"
import { type DatabaseLayerConfig, databaseLayerConfig } from "./DatabasePlace.js"
import { acquireDataDirLock, DataDirLocked, DataDirLockFailed } from "./DataDirLock.js"
import { healthRoutes } from "./HealthRoutes.js"
import { type HttpServer, ListenFailed, serve } from "./HttpServer.js"
import type { Around } from "./RouteDispatch.js"
import type { Route } from "./Router.js"
import { resolveSecrets, type Secrets } from "./Secrets.js"

export { type DatabaseLayerConfig, databaseLayerConfig, PGLITE_SUBDIR } from "./DatabasePlace.js"

/**
 * What the host is assembled from. The database comes in as a layer (built once, held for the
 * process lifetime, released after the last request) and `ping` as its readiness probe; the routes
 * of later features plug in through `routes`.
 */
export interface HostInput {
  readonly config: HostConfig
  readonly secrets: Secrets
  readonly database: DatabaseLayerConfig
}

export interface HostDependencies<R> {
  /** The database and everything built on it (the engine, auth), held for the process lifetime. */
  readonly databaseLayer: (input: HostInput) => Layer.Layer<R, unknown>
  readonly ping: Effect.Effect<void, unknown, R>
  /** The routes of the application, built once the layer is up (they may close over its services). */
  readonly routes?: (input: HostInput) => Effect.Effect<ReadonlyArray<Route<R>>, never, R>
  /** Runs around every request (rate limits, metrics). */
  readonly around?: (input: HostInput) => Effect.Effect<Around<R>, never, R>
  /** Called once the server listens (the WebSocket endpoint attaches to it here). */
  readonly onListening?: (input: HostInput, server: HttpServer) => Effect.Effect<void, never, R | Scope.Scope>
}

/** The database could not be opened or migrated. */
export class DatabaseUnavailable extends Data.TaggedError("DatabaseUnavailable")<{
  readonly message: string
}> {}

/** Every way the start can fail; each carries the one line printed before exiting with code 1. */
export type StartupFailure =
  | InvalidConfiguration
  | DataDirLocked
  | DataDirLockFailed
  | ListenFailed
  | DatabaseUnavailable
  | ClusterUnavailable

// The driver's own message (refused connection, unknown role, ...) is what an operator can act on;
// drivers do not put the connection string in it.
const describe = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  const cause = typeof error === "object" && error !== null && "cause" in error ? error.cause : undefined
  return cause instanceof Error && cause.message !== "" ? `${message}: ${cause.message}` : message
}

/**
 * The host from start to shutdown: configuration, data-directory lock (embedded mode), secrets,
 * database with migrations, HTTP server. It runs until interrupted (SIGTERM/SIGINT through
 * `runMain`); the scopes then unwind in reverse: stop listening and drain, close the database,
 * release the lock.
 */
export const runHost = <R>(deps: HostDependencies<R>): Effect.Effect<never, StartupFailure> =>
  Effect.gen(function* () {
    const config = yield* loadHostConfig
    return yield* Effect.gen(function* () {
      const embedded = config.database.kind === "pglite"
      yield* Effect.logInfo("starting").pipe(
        Effect.annotateLogs({
          database: embedded ? "embedded" : "postgres",
          ...(embedded ? { dataDir: path.resolve(config.dataDir) } : {}),
          host: config.host,
          port: config.port,
          demo: config.demo
        })
      )
      // Registered first, so it runs last: after the database is closed and the lock released.
      yield* Effect.addFinalizer(() => Effect.logInfo("stopped"))
      if (embedded) yield* acquireDataDirLock(config.dataDir)
      const secrets = yield* resolveSecrets(config)
      yield* Effect.logInfo("secrets loaded").pipe(
        Effect.annotateLogs({
          encryptionKey: Option.isSome(config.encryptionKeys) ? "environment" : "data directory",
          jwtSecret: Option.isSome(config.jwtSecret) ? "environment" : "data directory"
        })
      )

      const input: HostInput = { config, secrets, database: databaseLayerConfig(config) }
      const database = deps.databaseLayer(input)
      const openedAt = Date.now()
      return yield* Effect.gen(function* () {
        yield* Effect.logInfo("database ready").pipe(
          Effect.annotateLogs({ milliseconds: Date.now() - openedAt })
        )
        const context = yield* Effect.context<R>()
        const appRoutes = deps.routes === undefined ? [] : yield* deps.routes(input)
        const around = deps.around === undefined ? undefined : yield* deps.around(input)
        const server = yield* serve({
          host: config.host,
          port: config.port,
          routes: [...healthRoutes(Effect.provide(deps.ping, context)), ...appRoutes],
          ...(around === undefined ? {} : { around })
        })
        if (deps.onListening !== undefined) yield* deps.onListening(input, server)
        yield* Effect.logInfo(`listening on ${server.url}`).pipe(Effect.annotateLogs({ url: server.url }))
        yield* Effect.addFinalizer(() => Effect.logInfo("shutting down"))
        return yield* Effect.never
      }).pipe(
        Effect.scoped,
        Effect.provide(database),
        Effect.mapError((error) =>
          error instanceof ListenFailed || error instanceof ClusterUnavailable
            ? error
            : new DatabaseUnavailable({ message: `cannot open the database: ${describe(error)}` })
        )
      )
    }).pipe(Effect.scoped, Logger.withMinimumLogLevel(config.logLevel))
  }).pipe(Effect.provide(Logger.json))

export const isStartupFailure = (error: unknown): error is StartupFailure =>
  error instanceof InvalidConfiguration ||
  error instanceof DataDirLocked ||
  error instanceof DataDirLockFailed ||
  error instanceof ListenFailed ||
  error instanceof DatabaseUnavailable ||
  error instanceof ClusterUnavailable
