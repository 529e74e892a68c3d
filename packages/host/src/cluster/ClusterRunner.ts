import {
  RunnerAddress,
  RunnerHealth,
  Runners,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "@effect/cluster"
import { layerClientProtocol, layerSocketServer } from "@effect/platform-node/NodeClusterSocket"
import { RpcSerialization } from "@effect/rpc"
import * as SqlClient from "@effect/sql/SqlClient"
import { ADVISORY_LOCK_NAMESPACE, makeClientLayer } from "@rfq/engine"
import { Duration, Effect, Layer, Option } from "effect"

export interface ClusterRunnerOptions {
  /** Where the other hosts reach this one; it listens there too. */
  readonly runnerHost: string
  readonly runnerPort: number
  /** The service's PostgreSQL, where the cluster keeps its runners, shard locks and messages. */
  readonly databaseUrl: string
  readonly schema?: string | undefined
}

/**
 * How soon the shards of a host that stopped answering are taken over: its shard locks expire after
 * `SHARD_LOCK_EXPIRATION` (refreshed every third of it), and runners check each other's health
 * every `HEALTH_CHECK_INTERVAL`. With 10 s the take-over measured 8–10.2 s here (a lock is 0–3 s
 * old when its host dies); 6 s brings it to ~4–7 s, inside the 10 s target. A healthy host whose
 * refreshes all fail for 6 s (its database connection stalled) loses its shards; the step's guard
 * keeps whatever it still tries to write from landing.
 */
export const SHARD_LOCK_EXPIRATION = Duration.seconds(6)
export const HEALTH_CHECK_INTERVAL = Duration.seconds(2)

/**
 * Every setting of the cluster, given explicitly: `ShardingConfig.layerFromEnv` (which
 * `NodeClusterSocket.layer` uses) would also read `HOST` and `PORT`, our own variables.
 * Advisory shard locks are off: their ids ignore the tables' prefix and schema, so two services
 * (or two test runs) on one database would take each other's locks; the lock rows are enough.
 */
export const shardingConfigOf = (options: ClusterRunnerOptions): ShardingConfig.ShardingConfig["Type"] => ({
  ...ShardingConfig.defaults,
  runnerAddress: Option.some(RunnerAddress.make(options.runnerHost, options.runnerPort)),
  runnerListenAddress: Option.none(),
  shardLockExpiration: SHARD_LOCK_EXPIRATION,
  shardLockRefreshInterval: Duration.seconds(2),
  shardLockDisableAdvisory: true,
  runnerHealthCheckInterval: HEALTH_CHECK_INTERVAL,
  refreshAssignmentsInterval: Duration.seconds(1),
  // Our entity handlers are plain calls into the engine; the engine keeps its own state.
  entityMaxIdleTime: Duration.minutes(1),
  entityTerminationTimeout: Duration.seconds(5)
})

/**
 * Builds `layer` holding the schema's start-up lock: the cluster creates its tables as its storage
 * starts (`CREATE TABLE IF NOT EXISTS`, which is not atomic in PostgreSQL), so hosts starting
 * together on a new schema would race into a duplicate-key error, which the cluster's storage
 * turns into a defect. One after the other, the later ones find the tables there.
 */
const underStartupLock = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const scope = yield* Effect.scope
      // A session-level lock on a connection of its own: the layer's statements run on other
      // connections, outside any transaction (the cluster's table set-up is not transactional).
      const lock = `SELECT pg_advisory_lock(${ADVISORY_LOCK_NAMESPACE}, hashtext(current_schema()))`
      const unlock = `SELECT pg_advisory_unlock(${ADVISORY_LOCK_NAMESPACE}, hashtext(current_schema()))`
      return yield* Effect.scoped(
        Effect.gen(function* () {
          const connection = yield* sql.reserve
          yield* connection.execute(lock, [], undefined)
          return yield* Layer.buildWithScope(layer, scope).pipe(
            Effect.ensuring(Effect.ignore(connection.execute(unlock, [], undefined)))
          )
        })
      )
    })
  )

/**
 * This host as a runner of the cluster (`@effect/cluster`): the socket server other runners send
 * to, the client it sends with, health checks by ping, and the cluster's SQL storage on the
 * service's own PostgreSQL (tables `cluster_*`, created by the cluster, in the service's schema),
 * over a small connection pool of its own so the cluster's polling never queues behind requests.
 * Provides `Sharding` (and `ShardingConfig`, which the engine's shard watch reads).
 */
export const clusterRunnerLayer = (options: ClusterRunnerOptions) => {
  const config = ShardingConfig.layer(shardingConfigOf(options))
  const sql = makeClientLayer({
    kind: "postgres",
    url: options.databaseUrl,
    schema: options.schema,
    queryTimeoutMs: 10_000
  })
  const storage = underStartupLock(
    Layer.mergeAll(
      SqlMessageStorage.layerWith({ prefix: "cluster" }),
      Layer.orDie(SqlRunnerStorage.layerWith({ prefix: "cluster" }))
    )
  ).pipe(Layer.provide(sql))
  const health = RunnerHealth.layerPing.pipe(
    Layer.provide(Runners.layerRpc),
    Layer.provide(layerClientProtocol)
  )
  return SocketRunner.layer.pipe(
    Layer.provide([layerSocketServer, layerClientProtocol]),
    Layer.provide(health),
    Layer.provideMerge(storage),
    Layer.provideMerge(config),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
}
