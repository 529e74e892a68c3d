import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, Either, Option, Redacted } from "effect"
import {
  decodeEncryptionKey,
  decodeJwtSecret,
  type EncryptionKeyRing,
  type HostConfig,
  InvalidConfiguration
} from "./Config.js"

export interface Secrets {
  /**
   * AES-256 keys for exchange credentials at rest, by key version (the highest seals). The key
   * file in DATA_DIR is version 1.
   */
  readonly encryptionKeys: EncryptionKeyRing
  /** HMAC key for access tokens. */
  readonly jwtSecret: Redacted.Redacted<Uint8Array>
}

export const ENCRYPTION_KEY_FILE = "encryption.key"
export const JWT_SECRET_FILE = "jwt.secret"

/**
 * Reads a key file, or creates it (mode 0600) when absent. The file is written under a scratch
 * name, flushed and renamed so that a crash never leaves a truncated key behind: losing the
 * encryption key would make every stored credential unreadable.
 */
const loadOrCreate = (
  file: string,
  generate: () => string,
  decode: (value: string) => Either.Either<Uint8Array, string>
): Uint8Array => {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch (error) {
    if (!(error instanceof Error && "code" in error && error.code === "ENOENT")) throw error
    text = generate()
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const scratch = `${file}.${process.pid}.tmp`
    const fd = fs.openSync(scratch, "w", 0o600)
    try {
      fs.writeFileSync(fd, `${text}\n`)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(scratch, file)
    const dir = fs.openSync(path.dirname(file), "r")
    try {
      fs.fsyncSync(dir)
    } finally {
      fs.closeSync(dir)
    }
  }
  return Either.getOrThrowWith(decode(text.trim()), (problem) => new Error(`${file} ${problem}`))
}

/**
 * The secrets the host runs with: from the environment when given; otherwise (embedded mode only,
 * the configuration guarantees it) from files in DATA_DIR, generated on the first start and reused
 * on every later one. Call it while holding the data directory's lock.
 */
export const resolveSecrets = (config: HostConfig): Effect.Effect<Secrets, InvalidConfiguration> =>
  Effect.try({
    try: () => {
      const fromFile = (name: string, generate: () => string, decode: typeof decodeJwtSecret) =>
        Redacted.make(loadOrCreate(path.join(config.dataDir, name), generate, decode))
      return {
        encryptionKeys: Option.getOrElse(config.encryptionKeys, () => {
          const key = fromFile(
            ENCRYPTION_KEY_FILE,
            () => randomBytes(32).toString("hex"),
            decodeEncryptionKey
          )
          return Redacted.make(new Map([[1, Redacted.value(key)]]))
        }),
        jwtSecret: Option.getOrElse(config.jwtSecret, () =>
          fromFile(JWT_SECRET_FILE, () => randomBytes(48).toString("base64url"), decodeJwtSecret)
        )
      }
    },
    catch: (error) =>
      new InvalidConfiguration({
        message: `invalid configuration: cannot load or create the secrets in DATA_DIR: ${
          error instanceof Error ? error.message : String(error)
        }`
      })
  })
