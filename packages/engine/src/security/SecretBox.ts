import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import { Context, Effect, Layer } from "effect"
import { type ApiError, apiError } from "../domain/Errors.js"

/**
 * AES-256-GCM for secrets at rest (exchange credentials' client secrets).
 *
 * Sealed form: [key version: 1 byte][IV: 12 bytes][ciphertext][tag: 16 bytes]. The additional
 * authenticated data binds a sealed value to its row (e.g. `credentials:<deskId>:<alias>`), so a
 * ciphertext copied onto another row fails to open. The tag length is enforced on decipher: Node
 * otherwise accepts a truncated tag.
 */
const IV_BYTES = 12
const TAG_BYTES = 16
const HEADER_BYTES = 1 + IV_BYTES

export interface SecretBoxService {
  readonly seal: (plaintext: string, aad: string) => Effect.Effect<Uint8Array, ApiError>
  readonly open: (sealed: Uint8Array, aad: string) => Effect.Effect<string, ApiError>
  /** The key version new values are sealed with. */
  readonly currentVersion: number
}

export class SecretBox extends Context.Tag("rfq/SecretBox")<SecretBox, SecretBoxService>() {}

/** The associated data binding an exchange credentials secret to its row (desk and alias). */
export const credentialsAad = (deskId: number, alias: string): string => `credentials:${deskId}:${alias}`

/** Decodes a 32-byte key given as 64 hex characters or base64. */
export const parseEncryptionKey = (text: string): Uint8Array | undefined => {
  const t = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, "hex")
  if (/^[A-Za-z0-9+/]{43}=?$/.test(t)) {
    const b = Buffer.from(t, "base64")
    return b.length === 32 ? b : undefined
  }
  return undefined
}

/**
 * A box over a key ring: `keys[v]` is key version v (1..255). The highest version seals; every
 * version opens, which is what key rotation needs.
 */
export const makeSecretBox = (keys: ReadonlyMap<number, Uint8Array>): SecretBoxService => {
  const versions = [...keys.keys()].filter((v) => v >= 1 && v <= 255 && keys.get(v)?.length === 32)
  const currentVersion = versions.length === 0 ? 0 : Math.max(...versions)
  const seal = (plaintext: string, aad: string) =>
    Effect.suspend(() => {
      const key = keys.get(currentVersion)
      if (key === undefined || key.length !== 32) return Effect.fail(apiError("encryptionKeyNotFound"))
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES })
      cipher.setAAD(Buffer.from(aad, "utf8"))
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
      return Effect.succeed(
        new Uint8Array(Buffer.concat([Buffer.from([currentVersion]), iv, body, cipher.getAuthTag()]))
      )
    })
  const open = (sealed: Uint8Array, aad: string) =>
    Effect.suspend(() => {
      if (sealed.length < HEADER_BYTES + TAG_BYTES) return Effect.fail(apiError("encryptedValueTooShort"))
      const key = keys.get(sealed[0]!)
      if (key === undefined || key.length !== 32) return Effect.fail(apiError("encryptionKeyNotFound"))
      const buf = Buffer.from(sealed)
      const iv = buf.subarray(1, HEADER_BYTES)
      const tag = buf.subarray(buf.length - TAG_BYTES)
      const body = buf.subarray(HEADER_BYTES, buf.length - TAG_BYTES)
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES })
        decipher.setAAD(Buffer.from(aad, "utf8"))
        decipher.setAuthTag(tag)
        const plain = Buffer.concat([decipher.update(body), decipher.final()])
        return Effect.succeed(plain.toString("utf8"))
      } catch {
        // The integrity check failed: a flipped bit, a swapped row or a wrong key. Never decrypt.
        return Effect.fail(apiError("invalidPadding", "the sealed value failed its integrity check"))
      }
    })
  return { seal, open, currentVersion }
}

export const SecretBoxLive = (keys: ReadonlyMap<number, Uint8Array>) =>
  Layer.succeed(SecretBox, makeSecretBox(keys))
