import { Buffer } from "node:buffer"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { Effect } from "effect"

/**
 * Client secrets at rest: scrypt with a random salt, encoded as
 * `scrypt$N$r$p$saltB64$hashB64` so that the cost can be raised later without breaking stored
 * hashes (each hash carries its own parameters). Derivation runs on libuv's thread pool, so a
 * verification does not block the event loop.
 */

export interface ScryptParams {
  /** CPU/memory cost, a power of two. Memory use is 128·N·r bytes. */
  readonly N: number
  readonly r: number
  readonly p: number
}

/** 32 MiB and roughly 50–200 ms per derivation on the machines we run on. */
export const defaultScryptParams: ScryptParams = { N: 2 ** 15, r: 8, p: 1 }

/**
 * The demo clients' cost (1 MiB, a few ms): their secrets are public (`<clientId>-secret`, printed
 * at every demo start and in the README), so a slow hash protects nothing there and would only
 * cost every demo start and every demo login 32 times the CPU. Every other secret gets the default.
 */
export const demoScryptParams: ScryptParams = { N: 2 ** 10, r: 8, p: 1 }

const SALT_BYTES = 16
const KEY_BYTES = 32

// Bounds for parameters read back from storage: a corrupted or hostile row must not make one
// verification allocate gigabytes or spin for minutes.
const MAX_N = 2 ** 20
const MAX_R = 32
const MAX_P = 16

const base64 = /^[A-Za-z0-9+/]+={0,2}$/

interface Decoded {
  readonly params: ScryptParams
  readonly salt: Buffer
  readonly hash: Buffer
}

const isPowerOfTwo = (n: number): boolean => Number.isSafeInteger(n) && n > 1 && (n & (n - 1)) === 0

const positiveInt = (text: string | undefined): number =>
  text !== undefined && /^[1-9][0-9]{0,9}$/.test(text) ? Number(text) : Number.NaN

const decode = (encoded: string): Decoded | undefined => {
  const parts = encoded.split("$")
  if (parts.length !== 6 || parts[0] !== "scrypt") return undefined
  const [N, r, p] = [positiveInt(parts[1]), positiveInt(parts[2]), positiveInt(parts[3])]
  if (!isPowerOfTwo(N) || N > MAX_N || !(r >= 1 && r <= MAX_R) || !(p >= 1 && p <= MAX_P)) return undefined
  const [saltText, hashText] = [parts[4]!, parts[5]!]
  if (!base64.test(saltText) || !base64.test(hashText)) return undefined
  const salt = Buffer.from(saltText, "base64")
  const hash = Buffer.from(hashText, "base64")
  if (salt.length < 8 || hash.length < 16 || hash.length > 64) return undefined
  return { params: { N, r, p }, salt, hash }
}

const derive = (
  secret: string,
  salt: Buffer,
  keyLength: number,
  params: ScryptParams
): Effect.Effect<Buffer> =>
  Effect.async<Buffer>((resume) => {
    // Node refuses scrypt above `maxmem` (32 MiB by default, exactly our default cost): allow twice the need.
    const maxmem = 2 * 128 * params.N * params.r * params.p + 1024 * 1024
    scrypt(secret, salt, keyLength, { N: params.N, r: params.r, p: params.p, maxmem }, (error, key) => {
      // The parameters are validated before we get here; a failure is a bug or an exhausted machine.
      resume(error === null ? Effect.succeed(key) : Effect.die(error))
    })
  })

/** A new encoded hash of `secret` with a fresh salt. */
export const hashSecret = (
  secret: string,
  params: ScryptParams = defaultScryptParams
): Effect.Effect<string> =>
  Effect.suspend(() => {
    const salt = randomBytes(SALT_BYTES)
    return Effect.map(
      derive(secret, salt, KEY_BYTES, params),
      (hash) =>
        `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64")}$${hash.toString("base64")}`
    )
  }).pipe(Effect.withSpan("SecretHash.hash"))

/**
 * Whether `secret` matches `encoded`. The comparison takes the same time wherever the first
 * differing byte is. An unreadable `encoded` is answered `false` (after no derivation at all, so
 * callers that need equal timing must pass a well-formed hash, e.g. `dummyHash`).
 */
export const verifySecret = (secret: string, encoded: string): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const decoded = decode(encoded)
    if (decoded === undefined) return Effect.succeed(false)
    return Effect.map(derive(secret, decoded.salt, decoded.hash.length, decoded.params), (candidate) =>
      timingSafeEqual(candidate, decoded.hash)
    )
  }).pipe(Effect.withSpan("SecretHash.verify"))

/** Whether `encoded` is a hash this module can verify (for provisioning tools and tests). */
export const isSecretHash = (encoded: string): boolean => decode(encoded) !== undefined

/**
 * A hash of a random secret nobody knows, with the given cost. Verifying a presented secret
 * against it costs the same as a real verification, which is what keeps an unknown client id
 * from answering faster than a known one.
 */
export const makeDummyHash = (params: ScryptParams = defaultScryptParams): Effect.Effect<string> =>
  hashSecret(randomBytes(32).toString("base64"), params)
