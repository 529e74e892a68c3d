import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  defaultScryptParams,
  hashSecret,
  isSecretHash,
  makeDummyHash,
  type ScryptParams,
  verifySecret
} from "../../src/auth/SecretHash.js"

const cheap: ScryptParams = { N: 2 ** 10, r: 8, p: 1 }

describe("SecretHash", () => {
  it.effect("a hash verifies its own secret and nothing else", () =>
    Effect.gen(function* () {
      const encoded = yield* hashSecret("demo-taker-secret", cheap)
      assert.isTrue(yield* verifySecret("demo-taker-secret", encoded))
      for (const other of ["demo-taker-secreT", "demo-taker-secret ", "", "demo-maker-1-secret"]) {
        assert.isFalse(yield* verifySecret(other, encoded), other)
      }
    })
  )

  it.effect("the default cost is scrypt N=2^15 r=8 p=1, encoded with its parameters and a 16-byte salt", () =>
    Effect.gen(function* () {
      const encoded = yield* hashSecret("s3cret")
      const [scheme, N, r, p, salt, hash] = encoded.split("$")
      assert.deepStrictEqual(
        [scheme, Number(N), Number(r), Number(p)],
        ["scrypt", defaultScryptParams.N, defaultScryptParams.r, defaultScryptParams.p]
      )
      assert.strictEqual(Buffer.from(salt!, "base64").length, 16)
      assert.strictEqual(Buffer.from(hash!, "base64").length, 32)
      assert.isTrue(yield* verifySecret("s3cret", encoded))
    })
  )

  it.effect("the same secret hashes differently each time (random salt), and both verify", () =>
    Effect.gen(function* () {
      const a = yield* hashSecret("same", cheap)
      const b = yield* hashSecret("same", cheap)
      assert.notStrictEqual(a, b)
      assert.isTrue(yield* verifySecret("same", a))
      assert.isTrue(yield* verifySecret("same", b))
    })
  )

  it.effect("a hash verifies with the parameters it carries, not the current defaults", () =>
    Effect.gen(function* () {
      const other: ScryptParams = { N: 2 ** 11, r: 4, p: 2 }
      const encoded = yield* hashSecret("x", other)
      assert.isTrue(encoded.startsWith("scrypt$2048$4$2$"))
      assert.isTrue(yield* verifySecret("x", encoded))
    })
  )

  it.effect("a tampered hash or salt no longer verifies", () =>
    Effect.gen(function* () {
      const encoded = yield* hashSecret("secret", cheap)
      const parts = encoded.split("$")
      const flip = (b64: string) => {
        const bytes = Buffer.from(b64, "base64")
        bytes[0] = bytes[0]! ^ 1
        return bytes.toString("base64")
      }
      const badHash = [...parts.slice(0, 5), flip(parts[5]!)].join("$")
      const badSalt = [...parts.slice(0, 4), flip(parts[4]!), parts[5]].join("$")
      assert.isFalse(yield* verifySecret("secret", badHash))
      assert.isFalse(yield* verifySecret("secret", badSalt))
    })
  )

  it.effect("unreadable or out-of-bounds encodings are answered false, never thrown", () =>
    Effect.gen(function* () {
      const good = yield* hashSecret("secret", cheap)
      const [, , , , salt, hash] = good.split("$")
      const bad = [
        "",
        "secret",
        "bcrypt$10$abc",
        `scrypt$1000$8$1$${salt}$${hash}`, // N not a power of two
        `scrypt$${2 ** 21}$8$1$${salt}$${hash}`, // N beyond the bound
        `scrypt$1024$0$1$${salt}$${hash}`,
        `scrypt$1024$8$99$${salt}$${hash}`,
        `scrypt$1024$8$1$${salt}$`,
        `scrypt$1024$8$1$!!!$${hash}`,
        `scrypt$1024$8$1$${salt}$${hash}$extra`
      ]
      for (const encoded of bad) {
        assert.isFalse(isSecretHash(encoded), encoded)
        assert.isFalse(yield* verifySecret("secret", encoded), encoded)
      }
      assert.isTrue(isSecretHash(good))
    })
  )

  it.effect("the dummy hash is well formed with the requested cost and matches no guess", () =>
    Effect.gen(function* () {
      const dummy = yield* makeDummyHash(cheap)
      assert.isTrue(isSecretHash(dummy))
      assert.isTrue(dummy.startsWith(`scrypt$${cheap.N}$${cheap.r}$${cheap.p}$`))
      assert.isFalse(yield* verifySecret("", dummy))
      assert.isFalse(yield* verifySecret("demo-taker-secret", dummy))
    })
  )
})
