import { Buffer } from "node:buffer"
import { assert, describe, it } from "@effect/vitest"
import { Effect, LogLevel, Option, Redacted } from "effect"
import type { EncryptionKeyRing, HostConfig } from "../src/Config.js"
import { loaded, problem } from "./support/configEnv.js"

const KEY_HEX = "0123456789abcdef".repeat(4)
const JWT = "j".repeat(32)
const external = { DATABASE_URL: "postgres://127.0.0.1:5432/test", ENCRYPTION_KEY: KEY_HEX, JWT_SECRET: JWT }

const bytes = (secret: Option.Option<Redacted.Redacted<Uint8Array>>): string =>
  Option.match(secret, {
    onNone: () => "none",
    onSome: (s) => Buffer.from(Redacted.value(s)).toString("hex")
  })

/** A key ring as `version:hex` entries in version order, or "none". */
const ring = (keys: Option.Option<EncryptionKeyRing>): string =>
  Option.match(keys, {
    onNone: () => "none",
    onSome: (r) =>
      [...Redacted.value(r)]
        .sort(([a], [b]) => a - b)
        .map(([version, key]) => `${version}:${Buffer.from(key).toString("hex")}`)
        .join(",")
  })

const KEY_2 = "fedcba9876543210".repeat(4)
const KEY_7 = "00112233445566778899aabbccddeeff".repeat(2)

describe("host configuration", () => {
  it.effect("without variables: embedded database, documented defaults, demo on, secrets to generate", () =>
    Effect.gen(function* () {
      const config: HostConfig = yield* loaded({})
      assert.deepStrictEqual(
        {
          port: config.port,
          host: config.host,
          database: config.database.kind,
          dataDir: config.dataDir,
          demo: config.demo,
          rate: config.rateLimitPerMinute,
          wsRate: config.wsRateLimitPerMinute,
          ttl: config.rfqTtlSeconds,
          queryTimeout: config.databaseQueryTimeoutMs,
          key: ring(config.encryptionKeys),
          jwt: bytes(config.jwtSecret),
          log: config.logLevel
        },
        {
          port: 8080,
          host: "127.0.0.1",
          database: "pglite",
          dataDir: "./data",
          demo: true,
          rate: 100,
          wsRate: 100,
          ttl: 300,
          queryTimeout: 3000,
          key: "none",
          jwt: "none",
          log: LogLevel.Info
        }
      )
    })
  )

  it.effect("with DATABASE_URL: postgres, demo off by default, secrets as given", () =>
    Effect.gen(function* () {
      const config = yield* loaded({ ...external, DATABASE_SCHEMA: "rfq_a" })
      assert.strictEqual(config.database.kind, "postgres")
      if (config.database.kind === "postgres") {
        assert.strictEqual(Redacted.value(config.database.url), external.DATABASE_URL)
        assert.deepStrictEqual(config.database.schema, Option.some("rfq_a"))
      }
      assert.isFalse(config.demo)
      assert.strictEqual(ring(config.encryptionKeys), `1:${KEY_HEX}`)
      assert.strictEqual(Buffer.from(Redacted.value(Option.getOrThrow(config.jwtSecret))).toString(), JWT)
      assert.isTrue((yield* loaded({ ...external, DEMO: "1" })).demo)
      assert.isFalse((yield* loaded({ DEMO: "0" })).demo)
    })
  )

  it.effect("PORT 0 (any free port) and the bounds are accepted", () =>
    Effect.gen(function* () {
      for (const port of [0, 1, 65535]) assert.strictEqual((yield* loaded({ PORT: `${port}` })).port, port)
    })
  )

  it.effect("LOG_LEVEL is case-insensitive and accepts warning and none as aliases", () =>
    Effect.gen(function* () {
      assert.strictEqual((yield* loaded({ LOG_LEVEL: "DEBUG" })).logLevel, LogLevel.Debug)
      assert.strictEqual((yield* loaded({ LOG_LEVEL: "warning" })).logLevel, LogLevel.Warning)
      assert.strictEqual((yield* loaded({ LOG_LEVEL: "none" })).logLevel, LogLevel.None)
    })
  )

  it.effect("an empty variable counts as unset", () =>
    Effect.gen(function* () {
      const config = yield* loaded({ PORT: "", DATABASE_URL: "", LOG_LEVEL: "" })
      assert.strictEqual(config.port, 8080)
      assert.strictEqual(config.database.kind, "pglite")
    })
  )

  it.effect("ENCRYPTION_KEY accepts 64 hex characters, base64 and base64url of 32 bytes", () =>
    Effect.gen(function* () {
      const key = Buffer.from(KEY_HEX, "hex")
      for (const encoded of [
        KEY_HEX,
        KEY_HEX.toUpperCase(),
        key.toString("base64"),
        key.toString("base64url")
      ]) {
        assert.strictEqual(ring((yield* loaded({ ENCRYPTION_KEY: encoded })).encryptionKeys), `1:${KEY_HEX}`)
      }
    })
  )

  it.effect("ENCRYPTION_KEYS is a ring of <version>:<key>, in any order, keys in either encoding", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [string, string]> = [
        [`1:${KEY_HEX}`, `1:${KEY_HEX}`],
        [`1:${KEY_HEX},2:${KEY_2}`, `1:${KEY_HEX},2:${KEY_2}`],
        [` 7 : ${KEY_7} , 1:${KEY_HEX.toUpperCase()} `, `1:${KEY_HEX},7:${KEY_7}`],
        [`2:${Buffer.from(KEY_2, "hex").toString("base64")}`, `2:${KEY_2}`],
        [`255:${KEY_2}`, `255:${KEY_2}`]
      ]
      for (const [value, expected] of cases) {
        assert.strictEqual(ring((yield* loaded({ ENCRYPTION_KEYS: value })).encryptionKeys), expected, value)
      }
      // Enough on its own with DATABASE_URL; ENCRYPTION_KEY is then not needed.
      const { ENCRYPTION_KEY: _single, ...withoutKey } = external
      const config = yield* loaded({ ...withoutKey, ENCRYPTION_KEYS: `2:${KEY_2}` })
      assert.strictEqual(ring(config.encryptionKeys), `2:${KEY_2}`)
    })
  )

  it.effect("bad ENCRYPTION_KEYS values are one line naming the entry, never the key", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [string, string]> = [
        [KEY_HEX, "ENCRYPTION_KEYS entry 1 must be <version>:<key>"],
        [`1:${KEY_HEX},`, "ENCRYPTION_KEYS entry 2 must be <version>:<key>"],
        [
          `0:${KEY_HEX}`,
          'ENCRYPTION_KEYS entry 1: the version before ":" must be an integer between 1 and 255'
        ],
        [`1:${KEY_HEX},256:${KEY_2}`, 'entry 2: the version before ":" must be an integer between 1 and 255'],
        [`v2:${KEY_HEX}`, 'entry 1: the version before ":" must be'],
        [`-1:${KEY_HEX}`, 'entry 1: the version before ":" must be'],
        [`:${KEY_HEX}`, 'entry 1: the version before ":" must be'],
        [`${KEY_HEX}:1`, 'entry 1: the version before ":" must be'],
        [`1:${KEY_HEX},1:${KEY_2}`, "ENCRYPTION_KEYS entry 2: version 1 is given twice"],
        [
          `1:${KEY_HEX},2:${KEY_2.slice(2)}`,
          "ENCRYPTION_KEYS entry 2 (version 2): the key must be 64 hex characters"
        ],
        [`1:${KEY_HEX}zz`, "ENCRYPTION_KEYS entry 1 (version 1): the key must be 64 hex characters"],
        [`3:`, "ENCRYPTION_KEYS entry 1 (version 3): the key must be"]
      ]
      for (const [value, expected] of cases) {
        const message = yield* problem({ ENCRYPTION_KEYS: value })
        assert.isTrue(message.startsWith("invalid configuration: "), message)
        assert.include(message, expected, value)
        assert.notInclude(message, "\n")
        for (const key of [KEY_HEX, KEY_2, KEY_2.slice(2)])
          assert.notInclude(message.toLowerCase(), key, value)
      }
    })
  )

  it.effect("ENCRYPTION_KEY and ENCRYPTION_KEYS together are refused on one line", () =>
    Effect.gen(function* () {
      const message = yield* problem({ ENCRYPTION_KEY: KEY_HEX, ENCRYPTION_KEYS: `1:${KEY_HEX},2:${KEY_2}` })
      assert.strictEqual(
        message,
        "invalid configuration: ENCRYPTION_KEY and ENCRYPTION_KEYS are both set; set one (ENCRYPTION_KEY=<key> is ENCRYPTION_KEYS=1:<key>)"
      )
    })
  )

  it.effect("each bad value is reported on one line that names the variable", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
        [{ PORT: "abc" }, 'PORT must be an integer between 0 and 65535, got "abc"'],
        [{ PORT: "65536" }, 'PORT must be an integer between 0 and 65535, got "65536"'],
        [{ PORT: "-1" }, 'PORT must be an integer between 0 and 65535, got "-1"'],
        [{ PORT: "80.5" }, 'PORT must be an integer between 0 and 65535, got "80.5"'],
        [{ HOST: "a b" }, 'HOST must be a host name or IP address, got "a b"'],
        [{ DATABASE_URL: "mysql://db/x" }, "DATABASE_URL must be a postgres:// or postgresql:// URL"],
        [{ DATABASE_URL: "not a url" }, "DATABASE_URL must be a postgres:// or postgresql:// URL"],
        [{ DEMO: "yes" }, 'DEMO must be 1 or 0, got "yes"'],
        [
          { RATE_LIMIT_PER_MINUTE: "0" },
          'RATE_LIMIT_PER_MINUTE must be an integer between 1 and 1000000000, got "0"'
        ],
        [
          { WS_RATE_LIMIT_PER_MINUTE: "x" },
          'WS_RATE_LIMIT_PER_MINUTE must be an integer between 1 and 1000000000, got "x"'
        ],
        [{ RFQ_TTL_SECONDS: "86401" }, 'RFQ_TTL_SECONDS must be an integer between 1 and 86400, got "86401"'],
        [
          { DATABASE_QUERY_TIMEOUT_MS: "50" },
          'DATABASE_QUERY_TIMEOUT_MS must be an integer between 100 and 600000, got "50"'
        ],
        [
          { ENCRYPTION_KEY: "abcd" },
          "ENCRYPTION_KEY must be 64 hex characters or the base64 encoding of 32 bytes"
        ],
        [{ JWT_SECRET: "short" }, "JWT_SECRET must be at least 32 bytes long"],
        [
          { LOG_LEVEL: "loud" },
          'LOG_LEVEL must be one of all, trace, debug, info, warn, error, fatal, off, got "loud"'
        ],
        [
          { DATABASE_URL: external.DATABASE_URL },
          "ENCRYPTION_KEY or ENCRYPTION_KEYS is required when DATABASE_URL is set"
        ],
        [{ DATABASE_SCHEMA: "rfq" }, "DATABASE_SCHEMA is only valid with DATABASE_URL"],
        [{ ...external, DATABASE_SCHEMA: "Bad-Name" }, "DATABASE_SCHEMA must be a lower-case SQL identifier"]
      ]
      for (const [env, expected] of cases) {
        const message = yield* problem(env)
        assert.isTrue(message.startsWith("invalid configuration: "), message)
        assert.include(message, expected)
        assert.notInclude(message, "\n")
      }
    })
  )

  it.effect("several bad values are all named, still on one line", () =>
    Effect.gen(function* () {
      const message = yield* problem({ PORT: "abc", RFQ_TTL_SECONDS: "0" })
      assert.include(message, "PORT must be")
      assert.include(message, "RFQ_TTL_SECONDS must be")
      assert.notInclude(message, "\n")
    })
  )

  it.effect("secret values never appear in an error", () =>
    Effect.gen(function* () {
      const secretish = "postgres-password-123"
      const urlMessage = yield* problem({ DATABASE_URL: `mysql://user:${secretish}@db/x` })
      assert.notInclude(urlMessage, secretish)
      const keyMessage = yield* problem({ ENCRYPTION_KEY: secretish })
      assert.notInclude(keyMessage, secretish)
      const jwtMessage = yield* problem({ JWT_SECRET: "tiny-secret" })
      assert.notInclude(jwtMessage, "tiny-secret")
    })
  )
})
