import { Buffer } from "node:buffer"
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Redacted } from "effect"
import { loadHostConfig } from "../src/Config.js"
import { ENCRYPTION_KEY_FILE, JWT_SECRET_FILE, resolveSecrets } from "../src/Secrets.js"
import { makeTempDir } from "./support/spawnHost.js"

const secretsFor = (env: Record<string, string>) =>
  loadHostConfig.pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
    Effect.flatMap(resolveSecrets),
    Effect.map((s) => ({
      key: [...Redacted.value(s.encryptionKeys)]
        .map(([version, key]) => `${version}:${Buffer.from(key).toString("hex")}`)
        .join(","),
      jwt: Buffer.from(Redacted.value(s.jwtSecret)).toString("hex")
    }))
  )

const mode = (file: string) => fs.statSync(file).mode & 0o777

describe("resolveSecrets", () => {
  it.effect("embedded mode generates both secrets into DATA_DIR with mode 0600 and reuses them", () =>
    Effect.gen(function* () {
      const dataDir = path.join(makeTempDir(), "nested")
      const first = yield* secretsFor({ DATA_DIR: dataDir })
      assert.match(first.key, /^1:[0-9a-f]{64}$/, "the generated key file is key version 1")
      assert.isAtLeast(first.jwt.length / 2, 32)
      for (const name of [ENCRYPTION_KEY_FILE, JWT_SECRET_FILE])
        assert.strictEqual(mode(path.join(dataDir, name)), 0o600)
      const second = yield* secretsFor({ DATA_DIR: dataDir })
      assert.deepStrictEqual(second, first)
      assert.deepStrictEqual(
        fs.readdirSync(dataDir).sort(),
        [ENCRYPTION_KEY_FILE, JWT_SECRET_FILE].sort(),
        "no scratch file is left behind"
      )
    })
  )

  it.effect("values from the environment win and nothing is written", () =>
    Effect.gen(function* () {
      const dataDir = makeTempDir()
      const key = "ab".repeat(32)
      const jwt = "s".repeat(40)
      const secrets = yield* secretsFor({ DATA_DIR: dataDir, ENCRYPTION_KEY: key, JWT_SECRET: jwt })
      assert.deepStrictEqual(secrets, { key: `1:${key}`, jwt: Buffer.from(jwt).toString("hex") })
      assert.deepStrictEqual(fs.readdirSync(dataDir), [])
    })
  )

  it.effect("a key ring from ENCRYPTION_KEYS wins over the key file and nothing is written", () =>
    Effect.gen(function* () {
      const dataDir = makeTempDir()
      const keys = `1:${"ab".repeat(32)},2:${"cd".repeat(32)}`
      const secrets = yield* secretsFor({
        DATA_DIR: dataDir,
        ENCRYPTION_KEYS: keys,
        JWT_SECRET: "s".repeat(40)
      })
      assert.strictEqual(secrets.key, keys)
      assert.deepStrictEqual(fs.readdirSync(dataDir), [])
    })
  )

  it.effect("with DATABASE_URL nothing is read from or written to DATA_DIR", () =>
    Effect.gen(function* () {
      const dataDir = path.join(makeTempDir(), "unused")
      yield* secretsFor({
        DATA_DIR: dataDir,
        DATABASE_URL: "postgres://127.0.0.1:5432/test",
        ENCRYPTION_KEY: "cd".repeat(32),
        JWT_SECRET: "t".repeat(32)
      })
      assert.isFalse(fs.existsSync(dataDir))
    })
  )

  it.effect("a damaged key file stops the start with one line naming the file", () =>
    Effect.gen(function* () {
      const dataDir = makeTempDir()
      fs.writeFileSync(path.join(dataDir, ENCRYPTION_KEY_FILE), "truncated", { mode: 0o600 })
      const result = yield* Effect.either(secretsFor({ DATA_DIR: dataDir }))
      assert.isTrue(Either.isLeft(result))
      const message = Either.isLeft(result) ? result.left.message : ""
      assert.include(message, path.join(dataDir, ENCRYPTION_KEY_FILE))
      assert.include(message, "must be 64 hex characters")
      assert.notInclude(message, "\n")
    })
  )
})
