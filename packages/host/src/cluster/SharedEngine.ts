import { type EngineLayerOptions, makeSharedEngineLayer, NatsEventsLive } from "@rfq/engine"
import { Layer } from "effect"
import { type ClusterConfig, ClusterUnavailable } from "../ClusterConfig.js"
import { clusterRunnerLayer } from "./ClusterRunner.js"

/**
 * The engine of this host when it is one of several (`RUNNER_ADDRESS` set): RFQ ownership from
 * the cluster's shards (this host a runner, `ClusterRunner.ts`), events over NATS JetStream, the
 * active-quote index in PostgreSQL. What it provides is what `makeEngineLayer` provides, so the
 * rest of the host does not know how many hosts there are.
 */
export const sharedEngineLayer = (
  cluster: ClusterConfig,
  database: { readonly url: string; readonly schema?: string | undefined },
  options: EngineLayerOptions
) => {
  const events = NatsEventsLive({ servers: cluster.natsUrl, namespace: cluster.namespace }).pipe(
    Layer.mapError((e) => new ClusterUnavailable(`cannot reach NATS at ${cluster.natsUrl}: ${e.message}`))
  )
  const runner = clusterRunnerLayer({
    runnerHost: cluster.runnerHost,
    runnerPort: cluster.runnerPort,
    databaseUrl: database.url,
    schema: database.schema
  }).pipe(
    Layer.mapError((e) =>
      e._tag === "SocketServerError"
        ? new ClusterUnavailable(
            `cannot listen on RUNNER_ADDRESS ${cluster.runnerHost}:${cluster.runnerPort}: ${
              e.cause instanceof Error ? e.cause.message : String(e.cause)
            }`
          )
        : e
    )
  )
  return makeSharedEngineLayer({ ...options, events }).pipe(Layer.provide(runner))
}
