import { Buffer } from "node:buffer"
import { Config, ConfigError, Data, Effect, Either, LogLevel, Option, Redacted } from "effect"

/**
 * The host's configuration, read from environment variables once at start. Every variable is
 * validated here so that a bad value stops the process before anything is opened, with one line
 * naming the variable. An empty variable counts as unset (container tooling often exports `X=`).
 *
 * Over 300 lines on purpose: every variable, its parser and its one-line error sit together, so
 * the whole configuration reads in one place.
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
}

export type DatabaseSetting =
  | { readonly kind: "pglite" }
  | {
      readonly kind: "postgres"
      readonly url: Redacted.Redacted<string>
      readonly schema: Option.Option<string>
    }

/** Key version → 32-byte key. The highest version seals new values; every version opens. */
export type EncryptionKeyRing = Redacted.Redacted<ReadonlyMap<number, Uint8Array>>

/** A configuration problem, already phrased as the one line the process prints before exiting. */
export class InvalidConfiguration extends Data.TaggedError("InvalidConfiguration")<{
  readonly message: string
}> {}

export const ENCRYPTION_KEY_BYTES = 32
export const MIN_JWT_SECRET_BYTES = 32

type Parse<A> = (raw: Option.Option<string>) => Either.Either<A, string>

/** One variable: empty is unset, and a parse failure becomes an error naming the variable. */
const variable = <A>(name: string, parse: Parse<A>): Config.Config<A> =>
  Config.option(Config.string(name)).pipe(
    Config.mapOrFail((raw) =>
      parse(Option.filter(raw, (value) => value.trim() !== "")).pipe(
        Either.mapLeft((problem) => ConfigError.InvalidData([], `${name} ${problem}`))
      )
    )
  )

const shown = (value: string): string => JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value)

const integerIn =
  (min: number, max: number, fallback: number): Parse<number> =>
  (raw) =>
    Option.match(raw, {
      onNone: () => Either.right(fallback),
      onSome: (value) => {
        const trimmed = value.trim()
        const parsed = /^\d{1,10}$/.test(trimmed) ? Number(trimmed) : Number.NaN
        return Number.isInteger(parsed) && parsed >= min && parsed <= max
          ? Either.right(parsed)
          : Either.left(`must be an integer between ${min} and ${max}, got ${shown(value)}`)
      }
    })

const parseHost: Parse<string> = (raw) =>
  Option.match(raw, {
    onNone: () => Either.right("127.0.0.1"),
    onSome: (value) =>
      /^[A-Za-z0-9.:_-]+$/.test(value.trim())
        ? Either.right(value.trim())
        : Either.left(`must be a host name or IP address, got ${shown(value)}`)
  })

// The URL may hold a password: it is never echoed back, and kept Redacted so no log can show it.
const parseDatabaseUrl: Parse<Option.Option<Redacted.Redacted<string>>> = (raw) =>
  Option.match(raw, {
    onNone: () => Either.right(Option.none()),
    onSome: (value) => {
      let protocol: string | undefined
      try {
        protocol = new URL(value.trim()).protocol
      } catch {
        protocol = undefined
      }
      return protocol === "postgres:" || protocol === "postgresql:"
        ? Either.right(Option.some(Redacted.make(value.trim())))
        : Either.left("must be a postgres:// or postgresql:// URL")
    }
  })

const parseSchema: Parse<Option.Option<string>> = (raw) =>
  Option.match(raw, {
    onNone: () => Either.right(Option.none()),
    onSome: (value) =>
      /^[a-z_][a-z0-9_]{0,62}$/.test(value)
        ? Either.right(Option.some(value))
        : Either.left(`must be a lower-case SQL identifier (a-z, 0-9, _), got ${shown(value)}`)
  })

const parseDemo: Parse<Option.Option<boolean>> = (raw) =>
  Option.match(raw, {
    onNone: () => Either.right(Option.none()),
    onSome: (value) => {
      const normalized = value.trim().toLowerCase()
      if (normalized === "1" || normalized === "true") return Either.right(Option.some(true))
      if (normalized === "0" || normalized === "false") return Either.right(Option.some(false))
      return Either.left(`must be 1 or 0, got ${shown(value)}`)
    }
  })

/** 64 hex characters or the base64 (or base64url) encoding of exactly 32 bytes. */
export const decodeEncryptionKey = (value: string): Either.Either<Uint8Array, string> => {
  const trimmed = value.trim()
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Either.right(new Uint8Array(Buffer.from(trimmed, "hex")))
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) {
    const bytes = Buffer.from(
      trimmed,
      trimmed.includes("-") || trimmed.includes("_") ? "base64url" : "base64"
    )
    if (bytes.length === ENCRYPTION_KEY_BYTES) return Either.right(new Uint8Array(bytes))
  }
  return Either.left("must be 64 hex characters or the base64 encoding of 32 bytes")
}

/** SecretBox stores the version in one byte; 0 is not a version. */
export const MAX_KEY_VERSION = 255

/**
 * `ENCRYPTION_KEYS`: comma-separated `<version>:<key>`, each key as `ENCRYPTION_KEY` takes it (64
 * hex characters or base64 of 32 bytes). Problems name the entry and its version, never the key.
 */
export const decodeEncryptionKeys = (
  value: string
): Either.Either<ReadonlyMap<number, Uint8Array>, string> => {
  const keys = new Map<number, Uint8Array>()
  const entries = value.split(",")
  for (const [index, raw] of entries.entries()) {
    const entry = raw.trim()
    const at = `entry ${index + 1}`
    const colon = entry.indexOf(":")
    if (colon === -1) return Either.left(`${at} must be <version>:<key>, e.g. 1:<64 hex characters>`)
    const versionText = entry.slice(0, colon).trim()
    const version = /^\d{1,3}$/.test(versionText) ? Number(versionText) : Number.NaN
    // Not echoed: a key written the wrong way round would be in it.
    if (!(version >= 1 && version <= MAX_KEY_VERSION)) {
      return Either.left(`${at}: the version before ":" must be an integer between 1 and ${MAX_KEY_VERSION}`)
    }
    if (keys.has(version)) return Either.left(`${at}: version ${version} is given twice`)
    const key = decodeEncryptionKey(entry.slice(colon + 1))
    if (Either.isLeft(key)) return Either.left(`${at} (version ${version}): the key ${key.left}`)
    keys.set(version, key.right)
  }
  return Either.right(keys)
}

/** Any string of at least 32 bytes (UTF-8); it is used as the HMAC key as is. */
export const decodeJwtSecret = (value: string): Either.Either<Uint8Array, string> => {
  const bytes = new Uint8Array(Buffer.from(value, "utf8"))
  return bytes.length >= MIN_JWT_SECRET_BYTES
    ? Either.right(bytes)
    : Either.left(`must be at least ${MIN_JWT_SECRET_BYTES} bytes long`)
}

const secret =
  (
    decode: (value: string) => Either.Either<Uint8Array, string>
  ): Parse<Option.Option<Redacted.Redacted<Uint8Array>>> =>
  (raw) =>
    Option.match(raw, {
      onNone: () => Either.right(Option.none()),
      onSome: (value) => Either.map(decode(value), (bytes) => Option.some(Redacted.make(bytes)))
    })

const keyRing: Parse<Option.Option<EncryptionKeyRing>> = (raw) =>
  Option.match(raw, {
    onNone: () => Either.right(Option.none()),
    onSome: (value) => Either.map(decodeEncryptionKeys(value), (keys) => Option.some(Redacted.make(keys)))
  })

const logLevels: ReadonlyArray<LogLevel.LogLevel> = LogLevel.allLevels

const parseLogLevel: Parse<LogLevel.LogLevel> = (raw) =>
  Option.match(raw, {
    onNone: () => Either.right(LogLevel.Info),
    onSome: (value) => {
      const given = value.trim().toLowerCase()
      const wanted = given === "warning" ? "warn" : given === "none" ? "off" : given
      const level = logLevels.find((candidate) => candidate.label.toLowerCase() === wanted)
      return level === undefined
        ? Either.left(
            `must be one of ${logLevels.map((l) => l.label.toLowerCase()).join(", ")}, got ${shown(value)}`
          )
        : Either.right(level)
    }
  })

const variables = Config.all({
  port: variable("PORT", integerIn(0, 65535, 8080)),
  host: variable("HOST", parseHost),
  databaseUrl: variable("DATABASE_URL", parseDatabaseUrl),
  databaseSchema: variable("DATABASE_SCHEMA", parseSchema),
  dataDir: variable("DATA_DIR", (raw) => Either.right(Option.getOrElse(raw, () => "./data"))),
  demo: variable("DEMO", parseDemo),
  rateLimitPerMinute: variable("RATE_LIMIT_PER_MINUTE", integerIn(1, 1_000_000, 100)),
  wsRateLimitPerMinute: variable("WS_RATE_LIMIT_PER_MINUTE", integerIn(1, 1_000_000, 100)),
  loginFailuresPerMinute: variable("LOGIN_FAILURES_PER_MINUTE", integerIn(1, 1_000_000, 10)),
  wsHeartbeatTimeoutMs: variable("WS_HEARTBEAT_TIMEOUT_MS", integerIn(100, 3_600_000, 30_000)),
  wsMaxBackpressureBytes: variable("WS_MAX_BACKPRESSURE_BYTES", integerIn(16_384, 1_073_741_824, 4_194_304)),
  rfqTtlSeconds: variable("RFQ_TTL_SECONDS", integerIn(1, 86_400, 300)),
  databaseQueryTimeoutMs: variable("DATABASE_QUERY_TIMEOUT_MS", integerIn(100, 600_000, 3000)),
  encryptionKey: variable("ENCRYPTION_KEY", secret(decodeEncryptionKey)),
  encryptionKeys: variable("ENCRYPTION_KEYS", keyRing),
  jwtSecret: variable("JWT_SECRET", secret(decodeJwtSecret)),
  logLevel: variable("LOG_LEVEL", parseLogLevel)
})

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
    const missing = [
      ...(external && Option.isNone(encryptionKeys) ? ["ENCRYPTION_KEY or ENCRYPTION_KEYS"] : []),
      ...(external && Option.isNone(v.jwtSecret) ? ["JWT_SECRET"] : [])
    ]
    if (missing.length > 0) {
      return Either.left(
        ConfigError.InvalidData(
          [],
          missing.map((name) => `${name} is required when DATABASE_URL is set`).join("; ")
        )
      )
    }
    if (!external && Option.isSome(v.databaseSchema)) {
      return Either.left(ConfigError.InvalidData([], "DATABASE_SCHEMA is only valid with DATABASE_URL"))
    }
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
      logLevel: v.logLevel
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
