import { Data, type Effect } from "effect"
import { BoundedCache } from "./BoundedCache.js"
import { type RateDecision, RateLimiter } from "../RateLimiter.js"

/**
 * Limits client-secret guessing: how many secrets may be verified (a full scrypt each) per window,
 * over every path that verifies one (`POST /oauth/token`, `POST /v1/auth`, WebSocket `auth`), all
 * sharing this one instance.
 *
 * An attempt reserves its place before the secret is verified and gives it back when the secret
 * matched, so only failures stay counted, and concurrent guesses cannot all slip past the check
 * before the first failure is recorded. A refused attempt costs no scrypt at all.
 *
 * - Per address (strict): a guesser on one address gets `perAddress` failed checks per window,
 *   whichever client ids it tries.
 * - Per client id (looser): guesses spread over many addresses stop at `perClient` per window.
 * - Both limits could lock out a real client that shares an address with a guesser or whose id
 *   is being guessed from elsewhere. So an address that has authenticated as a client before
 *   (within `trustedMillis`) is held, for that client, only to a limit of its own (`perAddress`
 *   per address and client): the real client keeps logging in from where it always does, and a
 *   guesser there still gets no more than `perAddress` tries at it.
 */
export interface LoginThrottleOptions {
  readonly perAddress?: number | undefined
  readonly perClient?: number | undefined
  readonly windowMs?: number | undefined
  /** How long an address stays trusted for a client after a successful check (default 24 h). */
  readonly trustedMillis?: number | undefined
  readonly trustedSize?: number | undefined
}

export const DEFAULT_FAILED_LOGINS_PER_ADDRESS = 10
export const DEFAULT_FAILED_LOGINS_PER_CLIENT = 50

/** A secret check refused before verification; answered like a rate limit (429 / -32603). */
export class LoginThrottled extends Data.TaggedError("LoginThrottled")<{
  readonly decision: RateDecision
  readonly windowMs: number
}> {}

/**
 * A reservation taken by `attempt`: `settle(true)` gives it back (the secret matched) and
 * `settle(false)` keeps it counted; `release()` gives it back when the check ended without a
 * verdict (the account could not be read), so a database outage counts no failures.
 */
export interface LoginAttempt {
  readonly settle: (matched: boolean) => void
  readonly release: () => void
}

/** The eight groups of an IPv6 address as numbers, or undefined when it is not one. */
const ipv6Groups = (text: string): Array<number> | undefined => {
  let body = text.replace(/%.*$/, "")
  // A dotted IPv4 tail (`::ffff:1.2.3.4`) is two groups.
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(body)
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(2).map(Number) as [number, number, number, number]
    body = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const halves = body.split("::")
  if (halves.length > 2) return undefined
  const part = (p: string | undefined) => (p === undefined || p === "" ? [] : p.split(":"))
  const head = part(halves[0])
  const tail = part(halves[1])
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0
  if (fill < 0) return undefined
  const groups = [...head, ...Array<string>(fill).fill("0"), ...tail]
  if (groups.length !== 8 || !groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined
  return groups.map((g) => Number.parseInt(g, 16))
}

/**
 * The address as a limiter key. IPv4 (also written as IPv4-mapped IPv6, as a dual-stack socket
 * reports it) is the address itself; other IPv6 addresses count by their /64, since one host
 * usually owns a whole /64 and counting single addresses would give it 2^64 budgets.
 */
export const addressKey = (address: string): string => {
  const text = address.trim().toLowerCase()
  const groups = text.includes(":") ? ipv6Groups(text) : undefined
  if (groups === undefined) return text
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) {
    return `${g6 >> 8}.${g6 & 0xff}.${g7 >> 8}.${g7 & 0xff}`
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`
}

/**
 * What the grants reserve attempts with. The local `LoginThrottle` answers at once; the one
 * shared by several hosts (`shared/RedisLoginThrottle.ts`) through an Effect.
 */
export interface LoginLimiter {
  readonly windowMs: number
  readonly attempt: (
    clientId: string,
    address: string | undefined,
    now: number
  ) => LoginAttempt | LoginThrottled | Effect.Effect<LoginAttempt, LoginThrottled>
}

export class LoginThrottle implements LoginLimiter {
  private readonly addresses: RateLimiter
  private readonly clients: RateLimiter
  /** Failed checks of a trusted (address, client) pair. */
  private readonly pairs: RateLimiter
  private readonly trusted: BoundedCache<string, true>
  private readonly trustedMillis: number

  constructor(options: LoginThrottleOptions = {}) {
    const windowMs = options.windowMs ?? 60_000
    const perAddress = options.perAddress ?? DEFAULT_FAILED_LOGINS_PER_ADDRESS
    this.addresses = new RateLimiter(perAddress, windowMs)
    this.pairs = new RateLimiter(perAddress, windowMs)
    this.clients = new RateLimiter(options.perClient ?? DEFAULT_FAILED_LOGINS_PER_CLIENT, windowMs)
    this.trustedMillis = options.trustedMillis ?? 24 * 3_600_000
    this.trusted = new BoundedCache(options.trustedSize ?? 100_000)
  }

  get windowMs(): number {
    return this.addresses.windowMs
  }

  /**
   * Reserves one verification of a secret for `clientId` from `address` (`undefined`: a caller
   * with no address, held to the client id's limit only), or the refusal.
   */
  attempt(clientId: string, address: string | undefined, now: number): LoginAttempt | LoginThrottled {
    const place = address === undefined ? undefined : addressKey(address)
    const pair = place === undefined ? undefined : `${place}\u0000${clientId}`
    const trusted = pair !== undefined && this.trusted.get(pair, now) === true
    // The keys this attempt counts under, taken in order; a refusal gives back the ones before it.
    const keys: Array<readonly [RateLimiter, string]> = trusted
      ? [[this.pairs, pair]]
      : [
          ...(place === undefined ? [] : [[this.addresses, `ip:${place}`] as const]),
          [this.clients, `client:${clientId}`] as const
        ]
    const taken: typeof keys = []
    for (const [limiter, key] of keys) {
      const decision = limiter.take(key, now)
      if (!decision.allowed) {
        for (const [l, k] of taken) l.refund(k, now)
        return new LoginThrottled({ decision, windowMs: this.windowMs })
      }
      taken.push([limiter, key])
    }
    const giveBack = () => {
      for (const [limiter, key] of taken) limiter.refund(key, now)
    }
    return {
      settle: (matched) => {
        if (!matched) return
        giveBack()
        if (pair !== undefined) this.trusted.set(pair, true, now + this.trustedMillis)
      },
      release: giveBack
    }
  }
}
