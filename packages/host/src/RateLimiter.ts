/**
 * Fixed-window rate limits: `limit` requests per key per window (a minute by default). Keys are
 * `user:<id>` for authenticated callers and `ip:<address>` before authentication. The address is
 * the socket's peer: `X-Forwarded-For` is ignored, so a spoofed header buys no extra budget.
 *
 * Ours, not Effect's `RateLimiter`: that one delays callers (it is a token bucket that waits),
 * while an API must answer 429 at once; and a synchronous counter costs no fiber on the read path.
 */
import type { Effect } from "effect"

export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Unix seconds at which the window resets. */
  readonly reset: number
}

/**
 * What the REST and WebSocket limits count with. The local `RateLimiter` answers at once (no fiber
 * on the read path); a limit shared by several hosts (`shared/RedisRateLimiter.ts`) answers through
 * an Effect. Callers check with `Effect.isEffect` and take the synchronous path when they can.
 */
export interface RateLimit {
  readonly limit: number
  readonly windowMs: number
  readonly take: (key: string, now: number) => RateDecision | Effect.Effect<RateDecision>
}

export class RateLimiter implements RateLimit {
  private readonly windows = new Map<string, { start: number; count: number }>()
  private lastSweep = 0

  constructor(
    readonly limit: number,
    readonly windowMs = 60_000
  ) {}

  take(key: string, now: number): RateDecision {
    const start = now - (now % this.windowMs)
    if (start !== this.lastSweep) this.sweep(start)
    let window = this.windows.get(key)
    if (window === undefined || window.start !== start) {
      window = { start, count: 0 }
      this.windows.set(key, window)
    }
    const allowed = window.count < this.limit
    if (allowed) window.count++
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - window.count),
      reset: Math.ceil((start + this.windowMs) / 1000)
    }
  }

  /**
   * Gives back one request `key` took at `takenAt` (the login limiter counts only failures), if
   * its window is still the current one: a new window never counted it.
   */
  refund(key: string, takenAt: number): void {
    const window = this.windows.get(key)
    if (window === undefined || window.start !== takenAt - (takenAt % this.windowMs)) return
    if (window.count > 0) window.count--
  }

  /** Forgets windows that ended, once per window, so idle keys do not accumulate. */
  private sweep(start: number) {
    this.lastSweep = start
    for (const [key, window] of this.windows) if (window.start < start) this.windows.delete(key)
  }

  get size(): number {
    return this.windows.size
  }
}

export const rateLimitHeaders = (d: RateDecision): Record<string, string> => ({
  "X-RateLimit-Limit": String(d.limit),
  "X-RateLimit-Remaining": String(d.remaining),
  "X-RateLimit-Reset": String(d.reset)
})
