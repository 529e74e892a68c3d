/**
 * Multi-host mode's settings, present when `RUNNER_ADDRESS` is set (`Config.ts` reads them; the
 * one-line errors for a missing piece are there). `namespace` names everything this service shares
 * outside PostgreSQL's schema (the cluster's tables, the NATS stream and subjects, the Redis keys),
 * so two services, or two test runs, on one PostgreSQL, NATS and Redis never meet.
 */
export interface ClusterConfig {
  /** Where the other hosts reach this one (`RUNNER_ADDRESS=host:port`). */
  readonly runnerHost: string
  readonly runnerPort: number
  /** `NATS_URL`, default `nats://127.0.0.1:4222`. */
  readonly natsUrl: string
  /** `REDIS_URL`, default `redis://127.0.0.1:6379`. */
  readonly redisUrl: string
  /** The database schema when set (`DATABASE_SCHEMA`), else `public`. */
  readonly namespace: string
}

/** A part multi-host mode needs could not be reached at start (NATS, Redis, the runner's port). */
export class ClusterUnavailable extends Error {
  readonly _tag = "ClusterUnavailable"
}
