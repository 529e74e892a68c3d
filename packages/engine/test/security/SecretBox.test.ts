import { randomBytes } from "node:crypto"
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { makeSecretBox, parseEncryptionKey } from "../../src/security/SecretBox.js"

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runSync(Effect.either(e))
const keyA = randomBytes(32)
const keyB = randomBytes(32)

describe("SecretBox (AES-256-GCM)", () => {
  const box = makeSecretBox(new Map([[1, keyA]]))

  it("opens what it sealed, with the same AAD", () => {
    const sealed = run(box.seal("s3cret", "credentials:1:dbt-main"))
    expect(Either.isRight(sealed)).toBe(true)
    if (Either.isRight(sealed))
      expect(run(box.open(sealed.right, "credentials:1:dbt-main"))).toEqual(Either.right("s3cret"))
  })

  it("never stores the plaintext and never seals twice alike", () => {
    const a = Effect.runSync(box.seal("s3cret-value", "x"))
    const b = Effect.runSync(box.seal("s3cret-value", "x"))
    expect(Buffer.from(a).includes(Buffer.from("s3cret-value"))).toBe(false)
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false)
  })

  it("refuses every single flipped bit", () => {
    const sealed = Effect.runSync(box.seal("secret", "aad"))
    for (let byte = 0; byte < sealed.length; byte++) {
      const damaged = new Uint8Array(sealed)
      damaged[byte] = damaged[byte]! ^ 0x01
      const opened = run(box.open(damaged, "aad"))
      expect(Either.isLeft(opened)).toBe(true)
    }
  })

  it("refuses a ciphertext moved to another row (AAD mismatch)", () => {
    const sealed = Effect.runSync(box.seal("secret", "credentials:1:a"))
    const opened = run(box.open(sealed, "credentials:2:a"))
    expect(Either.isLeft(opened) && opened.left.message).toBe("invalid padding")
  })

  it("refuses a truncated value and a truncated tag", () => {
    const sealed = Effect.runSync(box.seal("secret", "aad"))
    const short = run(box.open(sealed.subarray(0, 20), "aad"))
    expect(Either.isLeft(short) && short.left.message).toBe("encrypted value too short")
    const cut = run(box.open(sealed.subarray(0, sealed.length - 4), "aad"))
    expect(Either.isLeft(cut)).toBe(true)
  })

  it("fails with `encryption key not found` without a key, and opens old versions after rotation", () => {
    const none = makeSecretBox(new Map())
    const r = run(none.seal("x", "aad"))
    expect(Either.isLeft(r) && r.left.message).toBe("encryption key not found")
    const old = Effect.runSync(box.seal("rotated", "aad"))
    const rotated = makeSecretBox(
      new Map([
        [1, keyA],
        [2, keyB]
      ])
    )
    expect(rotated.currentVersion).toBe(2)
    expect(run(rotated.open(old, "aad"))).toEqual(Either.right("rotated"))
    const resealed = Effect.runSync(rotated.seal("rotated", "aad"))
    expect(resealed[0]).toBe(2)
    const onlyNew = makeSecretBox(new Map([[2, keyB]]))
    expect(run(onlyNew.open(resealed, "aad"))).toEqual(Either.right("rotated"))
    const lost = run(onlyNew.open(old, "aad"))
    expect(Either.isLeft(lost) && lost.left.message).toBe("encryption key not found")
  })

  it("parses keys as 64 hex characters or base64 of 32 bytes", () => {
    expect(Buffer.from(parseEncryptionKey(keyA.toString("hex"))!).equals(keyA)).toBe(true)
    expect(parseEncryptionKey(keyA.toString("base64"))?.length).toBe(32)
    expect(parseEncryptionKey("short")).toBeUndefined()
  })
})
