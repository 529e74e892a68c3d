import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { DEFAULT_NATS_URL, DEFAULT_REDIS_URL } from "../src/Config.js"
import { loaded, problem } from "./support/configEnv.js"

const KEY_HEX = "0123456789abcdef".repeat(4)
const JWT = "j".repeat(32)
const DATABASE_URL = "postgres://127.0.0.1:5432/test"
/** Everything multi-host mode needs, with the defaults for NATS and Redis. */
const multiHost = { DATABASE_URL, ENCRYPTION_KEY: KEY_HEX, JWT_SECRET: JWT, RUNNER_ADDRESS: "10.0.0.5:9101" }

describe("multi-host configuration (RUNNER_ADDRESS)", () => {
  it.effect("without RUNNER_ADDRESS there is no cluster, embedded or on PostgreSQL", () =>
    Effect.gen(function* () {
      assert.isTrue(Option.isNone((yield* loaded({})).cluster))
      const { RUNNER_ADDRESS: _runner, ...oneHost } = multiHost
      assert.isTrue(Option.isNone((yield* loaded(oneHost)).cluster))
    })
  )

  it.effect("RUNNER_ADDRESS switches it on: NATS and Redis on their local defaults, namespace public", () =>
    Effect.gen(function* () {
      const config = yield* loaded(multiHost)
      assert.deepStrictEqual(
        config.cluster,
        Option.some({
          runnerHost: "10.0.0.5",
          runnerPort: 9101,
          natsUrl: DEFAULT_NATS_URL,
          redisUrl: DEFAULT_REDIS_URL,
          namespace: "public"
        })
      )
      assert.strictEqual(DEFAULT_NATS_URL, "nats://127.0.0.1:4222")
      assert.strictEqual(DEFAULT_REDIS_URL, "redis://127.0.0.1:6379")
      assert.strictEqual(config.database.kind, "postgres")
    })
  )

  it.effect("NATS_URL, REDIS_URL and DATABASE_SCHEMA as given; a host name or [IPv6] runner address", () =>
    Effect.gen(function* () {
      const config = yield* loaded({
        ...multiHost,
        RUNNER_ADDRESS: "rfq-2.internal:7000",
        NATS_URL: "tls://user:pw@nats.internal:4222",
        REDIS_URL: "rediss://:pw@redis.internal:6380/2",
        DATABASE_SCHEMA: "venue_a"
      })
      assert.deepStrictEqual(
        config.cluster,
        Option.some({
          runnerHost: "rfq-2.internal",
          runnerPort: 7000,
          natsUrl: "tls://user:pw@nats.internal:4222",
          redisUrl: "rediss://:pw@redis.internal:6380/2",
          namespace: "venue_a"
        })
      )
      const v6 = yield* loaded({ ...multiHost, RUNNER_ADDRESS: "[fd00::5]:9101", NATS_URL: "nats://n:4222" })
      assert.deepStrictEqual(
        Option.map(v6.cluster, (c) => [c.runnerHost, c.runnerPort, c.natsUrl]),
        Option.some(["fd00::5", 9101, "nats://n:4222"] as [string, number, string])
      )
    })
  )

  it.effect("each missing piece or bad value is one line naming the variable", () =>
    Effect.gen(function* () {
      const { DATABASE_URL: _url, ...noDatabase } = multiHost
      const { JWT_SECRET: _jwt, ...noJwt } = multiHost
      const { ENCRYPTION_KEY: _key, ...noKey } = multiHost
      const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
        [noDatabase, "RUNNER_ADDRESS needs DATABASE_URL (several hosts share one PostgreSQL)"],
        [{ RUNNER_ADDRESS: "127.0.0.1:9101" }, "RUNNER_ADDRESS needs DATABASE_URL"],
        [noJwt, "JWT_SECRET is required when RUNNER_ADDRESS is set (the same on every host)"],
        [
          noKey,
          "ENCRYPTION_KEY or ENCRYPTION_KEYS is required when RUNNER_ADDRESS is set (the same on every host)"
        ],
        [
          { ...multiHost, PORT: "9101" },
          "RUNNER_ADDRESS port 9101 is also PORT; the runner needs a port of its own"
        ],
        [{ ...multiHost, RUNNER_ADDRESS: "10.0.0.5:8080" }, "RUNNER_ADDRESS port 8080 is also PORT"],
        [
          { ...multiHost, RUNNER_ADDRESS: "10.0.0.5" },
          'RUNNER_ADDRESS must be host:port with a port between 1 and 65535, got "10.0.0.5"'
        ],
        [{ ...multiHost, RUNNER_ADDRESS: "10.0.0.5:0" }, "RUNNER_ADDRESS must be host:port with a port"],
        [{ ...multiHost, RUNNER_ADDRESS: "10.0.0.5:65536" }, "RUNNER_ADDRESS must be host:port"],
        [{ ...multiHost, RUNNER_ADDRESS: "a b:9101" }, "RUNNER_ADDRESS must be host:port"],
        [{ ...multiHost, RUNNER_ADDRESS: "::1:9101" }, "RUNNER_ADDRESS must be host:port"],
        [
          { ...multiHost, RUNNER_ADDRESS: "0.0.0.0:9101" },
          "RUNNER_ADDRESS must be an address the other hosts can reach, not 0.0.0.0"
        ],
        [
          { ...multiHost, RUNNER_ADDRESS: "[::]:9101" },
          "RUNNER_ADDRESS must be an address the other hosts can"
        ],
        [{ ...multiHost, NATS_URL: "http://127.0.0.1:4222" }, "NATS_URL must be a nats:// or tls:// URL"],
        [{ ...multiHost, NATS_URL: "127.0.0.1:4222" }, "NATS_URL must be a nats:// or tls:// URL"],
        [
          { ...multiHost, REDIS_URL: "tcp://127.0.0.1:6379" },
          "REDIS_URL must be a redis:// or rediss:// URL"
        ],
        [
          { NATS_URL: "nats://127.0.0.1:4222" },
          "NATS_URL is only valid with RUNNER_ADDRESS (multi-host mode)"
        ],
        [
          { REDIS_URL: "redis://127.0.0.1:6379" },
          "REDIS_URL is only valid with RUNNER_ADDRESS (multi-host mode)"
        ]
      ]
      for (const [env, expected] of cases) {
        const message = yield* problem(env)
        assert.isTrue(message.startsWith("invalid configuration: "), message)
        assert.include(message, expected, JSON.stringify(env))
        assert.notInclude(message, "\n")
      }
    })
  )

  it.effect("several missing pieces are all named on one line", () =>
    Effect.gen(function* () {
      const message = yield* problem({ RUNNER_ADDRESS: "127.0.0.1:8080" })
      for (const part of [
        "RUNNER_ADDRESS needs DATABASE_URL",
        "RUNNER_ADDRESS port 8080 is also PORT",
        "ENCRYPTION_KEY or ENCRYPTION_KEYS is required when RUNNER_ADDRESS is set",
        "JWT_SECRET is required when RUNNER_ADDRESS is set"
      ])
        assert.include(message, part)
      assert.notInclude(message, "\n")
    })
  )

  it.effect("passwords in NATS_URL and REDIS_URL never appear in an error", () =>
    Effect.gen(function* () {
      const secretish = "nats-password-123"
      for (const env of [
        { ...multiHost, NATS_URL: `http://user:${secretish}@nats:4222` },
        { ...multiHost, REDIS_URL: `memcached://:${secretish}@redis:6379` },
        { NATS_URL: `nats://user:${secretish}@nats:4222` }
      ]) {
        assert.notInclude(yield* problem(env), secretish)
      }
    })
  )
})
