import { Buffer } from "node:buffer"
import { cutText } from "@rfq/engine"
import { Config, ConfigError, Either, LogLevel, Option, Redacted } from "effect"

/**
 * The parsers of the host's environment variables, one per kind of value, each phrasing its
 * problem as the rest of a line that starts with the variable's name (`Config.ts` puts the
 * variables together and adds the rules that tie them).
 */
export type Parse<A> = (raw: Option.Option<string>) => Either.Either<A, string>

export const ENCRYPTION_KEY_BYTES = 32
export const MIN_JWT_SECRET_BYTES = 32

/** SecretBox stores the version in one byte; 0 is not a version. */
export const MAX_KEY_VERSION = 255

/** One variable: empty is unset, and a parse failure becomes an error naming the variable. */
export const variable = <A>(name: string, parse: Parse<A>): Config.Config<A> =>
  Config.option(Config.string(name)).pipe(
    Config.mapOrFail((raw) =>
      parse(Option.filter(raw, (value) => value.trim() !== "")).pipe(
        Either.mapLeft((problem) => ConfigError.InvalidData([], `${name} ${problem}`))
      )
    )
  )

const shown = (value: string): string => JSON.stringify(cutText(value, 64))

/** A variable that may be absent: `Option.none()` when unset, else what `parse` makes of it. */
const optional =
  <A>(parse: (value: string) => Either.Either<A, string>): Parse<Option.Option<A>> =>
  (raw) =>
    Option.match(raw, {
      onNone: () => Either.right(Option.none()),
      onSome: (value) => Either.map(parse(value), Option.some)
    })

export const integerIn =
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

const HOST_NAME = /^[A-Za-z0-9.:_-]+$/

export const parseHost: Parse<string> = (raw) =>
  Option.match(raw, {
    onNone: () => Either.right("127.0.0.1"),
    onSome: (value) =>
      HOST_NAME.test(value.trim())
        ? Either.right(value.trim())
        : Either.left(`must be a host name or IP address, got ${shown(value)}`)
  })

/**
 * `URL` with one of `protocols` (each with its colon). URLs may hold a password: they are never
 * echoed back in an error.
 */
const urlOf =
  (protocols: ReadonlyArray<string>, expected: string) =>
  (value: string): Either.Either<string, string> => {
    let protocol: string | undefined
    try {
      protocol = new URL(value.trim()).protocol
    } catch {
      protocol = undefined
    }
    return protocol !== undefined && protocols.includes(protocol)
      ? Either.right(value.trim())
      : Either.left(`must be a ${expected} URL`)
  }

// Kept Redacted so no log can show the password it may hold.
export const parseDatabaseUrl: Parse<Option.Option<Redacted.Redacted<string>>> = optional((value) =>
  Either.map(urlOf(["postgres:", "postgresql:"], "postgres:// or postgresql://")(value), Redacted.make)
)

/** `NATS_URL`: one server, `nats://` or `tls://` (credentials may be in it). */
export const parseNatsUrl: Parse<Option.Option<string>> = optional(
  urlOf(["nats:", "tls:"], "nats:// or tls://")
)

/** `REDIS_URL`: `redis://` or `rediss://` (TLS); credentials may be in it. */
export const parseRedisUrl: Parse<Option.Option<string>> = optional(
  urlOf(["redis:", "rediss:"], "redis:// or rediss://")
)

/**
 * `RUNNER_ADDRESS`: `host:port` (`[v6]:port` for an IPv6 address), port 1–65535. A wildcard
 * address (`0.0.0.0`, `::`) is refused: the other hosts could not connect to it.
 */
export const parseRunnerAddress: Parse<Option.Option<{ readonly host: string; readonly port: number }>> =
  optional((value) => {
    const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9._-]+)):(\d{1,5})$/.exec(value.trim())
    const host = match?.[1] ?? match?.[2]
    const port = Number(match?.[3])
    if (host === undefined || !(port >= 1 && port <= 65535)) {
      return Either.left(`must be host:port with a port between 1 and 65535, got ${shown(value)}`)
    }
    if (host === "0.0.0.0" || host === "::") {
      return Either.left(`must be an address the other hosts can reach, not ${host}`)
    }
    return Either.right({ host, port })
  })

export const parseSchema: Parse<Option.Option<string>> = optional((value) =>
  /^[a-z_][a-z0-9_]{0,62}$/.test(value)
    ? Either.right(value)
    : Either.left(`must be a lower-case SQL identifier (a-z, 0-9, _), got ${shown(value)}`)
)

export const parseDemo: Parse<Option.Option<boolean>> = optional((value) => {
  const normalized = value.trim().toLowerCase()
  if (normalized === "1" || normalized === "true") return Either.right(true)
  if (normalized === "0" || normalized === "false") return Either.right(false)
  return Either.left(`must be 1 or 0, got ${shown(value)}`)
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

/** A secret (key or HMAC key) kept Redacted from the moment it is read. */
export const secret = (
  decode: (value: string) => Either.Either<Uint8Array, string>
): Parse<Option.Option<Redacted.Redacted<Uint8Array>>> =>
  optional((value) => Either.map(decode(value), (bytes) => Redacted.make(bytes)))

/** Key version → 32-byte key. The highest version seals new values; every version opens. */
export type EncryptionKeyRing = Redacted.Redacted<ReadonlyMap<number, Uint8Array>>

export const keyRing: Parse<Option.Option<EncryptionKeyRing>> = optional((value) =>
  Either.map(decodeEncryptionKeys(value), (keys) => Redacted.make(keys))
)

const logLevels: ReadonlyArray<LogLevel.LogLevel> = LogLevel.allLevels

export const parseLogLevel: Parse<LogLevel.LogLevel> = (raw) =>
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
