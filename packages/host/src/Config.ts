import { Config, ConfigError, Data, Effect, Either, type LogLevel, Option, Redacted } from "effect"
import type { ClusterConfig } from "./ClusterConfig.js"
import {
  decodeEncryptionKey,
  decodeJwtSecret,
  type EncryptionKeyRing,
  integerIn,
  keyRing,
  parseDatabaseUrl,
  parseDemo,
  parseHost,
  parseLogLevel,
  parseNatsUrl,
  parseRedisUrl,
  parseRunnerAddress,
  parseSchema,
  secret,
  variable
} from "./ConfigVariables.js"

/**
 * The host's configuration, read from environment variables once at start. Every variable is
 * validated here so that a bad value stops the process before anything is opened, with one line
 * naming the variable. An empty variable counts as unset (container tooling often exports `X=`).
 * The parsers are in `ConfigVariables.ts`; the rules that tie variables together are here.
 */
export interface HostConfig {
  readonly port: number
  readonly host: string
  readonly database: DatabaseSetting
  readonly dataDir: string
  readonly demo: boolean
  readonly rateLimitPerMinute: number
  readonly wsRateLimitPerMinute: number
  /**
   * Failed client-secret checks per address per minute over every login path (REST and WS);
   * a client id takes five times as many from all addresses together (docs/auth.md).
   */
  readonly loginFailuresPerMinute: number
  /** A WebSocket session without a heartbeat for this long is closed (4000 `heartbeat timeout`). */
  readonly wsHeartbeatTimeoutMs: number
  /** A WebSocket whose unsent output passes this many bytes is cut off (a client that stopped reading). */
  readonly wsMaxBackpressureBytes: number
  readonly rfqTtlSeconds: number
  /**
   * The deadline of every database statement (PostgreSQL), or of the wait for the embedded
   * database (PGlite): a database that stops answering costs a request this long, then a 503.
   */
  readonly databaseQueryTimeoutMs: number
  /**
   * The key ring for exchange credentials at rest, by key version: `ENCRYPTION_KEYS`, or
   * `ENCRYPTION_KEY` as version 1. Unset in embedded mode means "generate into DATA_DIR" (see
   * `resolveSecrets`).
   */
  readonly encryptionKeys: Option.Option<EncryptionKeyRing>
  readonly jwtSecret: Option.Option<Redacted.Redacted<Uint8Array>>
  readonly logLevel: LogLevel.LogLevel
  /**
   * Multi-host mode: set when `RUNNER_ADDRESS` is. Then `DATABASE_URL`, `JWT_SECRET` and the
   * encryption keys come from the environment (the same on every host); none means one host.
   */
  readonly cluster: Option.Option<ClusterConfig>
}

export type DatabaseSetting =
  | { readonly kind: "pglite" }
  | {
      readonly kind: "postgres"
      readonly url: Redacted.Redacted<string>
      readonly schema: Option.Option<string>
    }

/** A configuration problem, already phrased as the one line the process prints before exiting. */
export class InvalidConfiguration extends Data.TaggedError("InvalidConfiguration")<{
  readonly message: string
}> {}

export {
  decodeEncryptionKey,
  decodeEncryptionKeys,
  decodeJwtSecret,
  ENCRYPTION_KEY_BYTES,
  type EncryptionKeyRing,
  MAX_KEY_VERSION,
  MIN_JWT_SECRET_BYTES
} from "./ConfigVariables.js"

/** Where NATS and Redis are when `RUNNER_ADDRESS` is set and `NATS_URL` / `REDIS_URL` are not. */
export const DEFAULT_NATS_URL = "nats://127.0.0.1:4222"
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379"

const variables = Config.all({
  port: variable("PORT", integerIn(0, 65535, 8080)),
  host: variable("HOST", parseHost),
  databaseUrl: variable("DATABASE_URL", parseDatabaseUrl),
  databaseSchema: variable("DATABASE_SCHEMA", parseSchema),
  dataDir: variable("DATA_DIR", (raw) => Either.right(Option.getOrElse(raw, () => "./data"))),
  demo: variable("DEMO", parseDemo),
  rateLimitPerMinute: variable("RATE_LIMIT_PER_MINUTE", integerIn(1, 1_000_000_000, 100)),
  wsRateLimitPerMinute: variable("WS_RATE_LIMIT_PER_MINUTE", integerIn(1, 1_000_000_000, 100)),
  loginFailuresPerMinute: variable("LOGIN_FAILURES_PER_MINUTE", integerIn(1, 1_000_000, 10)),
  wsHeartbeatTimeoutMs: variable("WS_HEARTBEAT_TIMEOUT_MS", integerIn(100, 3_600_000, 30_000)),
  wsMaxBackpressureBytes: variable("WS_MAX_BACKPRESSURE_BYTES", integerIn(16_384, 1_073_741_824, 4_194_304)),
  rfqTtlSeconds: variable("RFQ_TTL_SECONDS", integerIn(1, 86_400, 300)),
  databaseQueryTimeoutMs: variable("DATABASE_QUERY_TIMEOUT_MS", integerIn(100, 600_000, 3000)),
  encryptionKey: variable("ENCRYPTION_KEY", secret(decodeEncryptionKey)),
  encryptionKeys: variable("ENCRYPTION_KEYS", keyRing),
  jwtSecret: variable("JWT_SECRET", secret(decodeJwtSecret)),
  logLevel: variable("LOG_LEVEL", parseLogLevel),
  runnerAddress: variable("RUNNER_ADDRESS", parseRunnerAddress),
  natsUrl: variable("NATS_URL", parseNatsUrl),
  redisUrl: variable("REDIS_URL", parseRedisUrl)
})

type Variables = Config.Config.Success<typeof variables>

/**
 * The problems of the variables taken together, each one line: secrets that must come from the
 * environment, multi-host mode's needs, variables that mean nothing without another.
 */
const ruleProblems = (v: Variables, encryptionKeys: Option.Option<EncryptionKeyRing>): Array<string> => {
  const external = Option.isSome(v.databaseUrl)
  const problems: Array<string> = []
  if (Option.isSome(v.runnerAddress)) {
    if (!external) problems.push("RUNNER_ADDRESS needs DATABASE_URL (several hosts share one PostgreSQL)")
    const runnerPort = v.runnerAddress.value.port
    if (runnerPort === v.port) {
      problems.push(`RUNNER_ADDRESS port ${runnerPort} is also PORT; the runner needs a port of its own`)
    }
  } else {
    for (const [name, value] of [
      ["NATS_URL", v.natsUrl],
      ["REDIS_URL", v.redisUrl]
    ] as const) {
      if (Option.isSome(value)) problems.push(`${name} is only valid with RUNNER_ADDRESS (multi-host mode)`)
    }
  }
  // Files in DATA_DIR would differ from host to host; a shared database needs the same secrets.
  const because = Option.isSome(v.runnerAddress)
    ? "when RUNNER_ADDRESS is set (the same on every host)"
    : external
      ? "when DATABASE_URL is set"
      : undefined
  if (because !== undefined) {
    if (Option.isNone(encryptionKeys))
      problems.push(`ENCRYPTION_KEY or ENCRYPTION_KEYS is required ${because}`)
    if (Option.isNone(v.jwtSecret)) problems.push(`JWT_SECRET is required ${because}`)
  }
  if (!external && Option.isSome(v.databaseSchema))
    problems.push("DATABASE_SCHEMA is only valid with DATABASE_URL")
  return problems
}

const clusterOf = (v: Variables): Option.Option<ClusterConfig> =>
  Option.map(v.runnerAddress, ({ host, port }) => ({
    runnerHost: host,
    runnerPort: port,
    natsUrl: Option.getOrElse(v.natsUrl, () => DEFAULT_NATS_URL),
    redisUrl: Option.getOrElse(v.redisUrl, () => DEFAULT_REDIS_URL),
    namespace: Option.getOrElse(v.databaseSchema, () => "public")
  }))

/** The whole configuration, with the rules that tie variables together. */
export const hostConfig: Config.Config<HostConfig> = variables.pipe(
  Config.mapOrFail((v) => {
    const external = Option.isSome(v.databaseUrl)
    if (Option.isSome(v.encryptionKey) && Option.isSome(v.encryptionKeys)) {
      return Either.left(
        ConfigError.InvalidData(
          [],
          "ENCRYPTION_KEY and ENCRYPTION_KEYS are both set; set one (ENCRYPTION_KEY=<key> is ENCRYPTION_KEYS=1:<key>)"
        )
      )
    }
    // The single-key form is key version 1 of a ring.
    const encryptionKeys = Option.orElse(v.encryptionKeys, () =>
      Option.map(v.encryptionKey, (key) => Redacted.make(new Map([[1, Redacted.value(key)]])))
    )
    const problems = ruleProblems(v, encryptionKeys)
    if (problems.length > 0) return Either.left(ConfigError.InvalidData([], problems.join("; ")))
    const database: DatabaseSetting = Option.match(v.databaseUrl, {
      onNone: () => ({ kind: "pglite" }) as const,
      onSome: (url) => ({ kind: "postgres", url, schema: v.databaseSchema }) as const
    })
    return Either.right({
      port: v.port,
      host: v.host,
      database,
      dataDir: v.dataDir,
      demo: Option.getOrElse(v.demo, () => !external),
      rateLimitPerMinute: v.rateLimitPerMinute,
      wsRateLimitPerMinute: v.wsRateLimitPerMinute,
      loginFailuresPerMinute: v.loginFailuresPerMinute,
      wsHeartbeatTimeoutMs: v.wsHeartbeatTimeoutMs,
      wsMaxBackpressureBytes: v.wsMaxBackpressureBytes,
      rfqTtlSeconds: v.rfqTtlSeconds,
      databaseQueryTimeoutMs: v.databaseQueryTimeoutMs,
      encryptionKeys,
      jwtSecret: v.jwtSecret,
      logLevel: v.logLevel,
      cluster: clusterOf(v)
    })
  })
)

/** Flattens a ConfigError tree into the messages it holds, each already naming its variable. */
const problems = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...problems(error.left), ...problems(error.right)]
    case "InvalidData":
      return [error.message]
    default:
      return [`${error.path.join(".")} ${error.message}`.trim()]
  }
}

export const formatConfigError = (error: ConfigError.ConfigError): string =>
  `invalid configuration: ${[...new Set(problems(error))].join("; ")}`

/** Reads and validates the configuration from the current ConfigProvider (the environment by default). */
export const loadHostConfig: Effect.Effect<HostConfig, InvalidConfiguration> = hostConfig.pipe(
  Effect.mapError((error) => new InvalidConfiguration({ message: formatConfigError(error) }))
)
