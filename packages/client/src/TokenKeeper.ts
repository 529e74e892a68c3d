import { isRecord, RfqError, restError, transportError } from "./RfqError.js"
import { sleep, type Timers } from "./Timers.js"

/**
 * The client's access token: got with the client-credentials grant of `POST /oauth/token` (the
 * spec's token request, form-encoded), renewed with the refresh grant `refreshAheadSeconds` before
 * it expires, and got afresh with the client credentials when the refresh is refused (a refresh
 * token that expired, or a family revoked because one of its tokens was used twice). Refresh
 * tokens are one-time: only this keeper uses them, one request at a time, so a WebSocket session
 * renews by taking the keeper's new access token (`auth/refresh {token}`) rather than spending the
 * refresh token itself.
 *
 * A token given by the caller (`accessToken`) is used as it is and never renewed.
 */

export interface Tokens {
  readonly accessToken: string
  /** Unix ms; undefined for a token given by the caller. */
  readonly expiresAt?: number
  readonly via: "login" | "refresh" | "given"
}

export interface TokenKeeperOptions {
  readonly baseUrl: string
  readonly fetch: typeof globalThis.fetch
  readonly timers: Timers
  readonly clientId?: string
  readonly clientSecret?: string
  readonly accessToken?: string
  /** How long before expiry the token is renewed (half-way for a token that lives no longer). */
  readonly refreshAheadSeconds: number
  /** How many times a throttled token request (429) waits for the reset and tries again. */
  readonly maxRateLimitRetries: number
}

/** After a refresh that could not reach the service, the next attempt waits this long. */
const RETRY_AFTER_NETWORK_FAILURE_MS = 5_000

interface TokenAnswer {
  readonly access_token: string
  readonly expires_in: number
  readonly refresh_token?: string
}

const isTokenAnswer = (u: unknown): u is TokenAnswer =>
  isRecord(u) && typeof u["access_token"] === "string" && typeof u["expires_in"] === "number"

export class TokenKeeper {
  private current: (Tokens & { readonly refreshToken?: string }) | undefined
  private pending: Promise<Tokens> | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private readonly listeners = new Set<(tokens: Tokens) => void>()
  /** Bumped by `forget`: an answer to a request sent before it is dropped. */
  private generation = 0

  constructor(private readonly options: TokenKeeperOptions) {
    if (options.accessToken !== undefined) this.current = { accessToken: options.accessToken, via: "given" }
  }

  get canLogin(): boolean {
    return this.options.clientId !== undefined && this.options.clientSecret !== undefined
  }

  /** The current token, logging in first when there is none. */
  async token(): Promise<string> {
    if (this.current !== undefined) return this.current.accessToken
    return (await this.login()).accessToken
  }

  /** Whether `token` is still the one in use (a request refused with it may retry with a newer one). */
  isCurrent(token: string): boolean {
    return this.current?.accessToken === token
  }

  /** Called with every new token, renewed or got afresh. */
  onTokens(listener: (tokens: Tokens) => void): () => void {
    this.listeners.add(listener)
    return () => void this.listeners.delete(listener)
  }

  /** The client-credentials grant; concurrent callers share one request. */
  login(): Promise<Tokens> {
    if (!this.canLogin) {
      return Promise.reject(
        new RfqError(401, "no-credentials", "no client id and secret to log in with (pass them to RfqClient)")
      )
    }
    return this.once(async (generation) =>
      this.adopt(await this.grant(this.credentials()), "login", generation)
    )
  }

  /** The refresh grant, or a fresh login when there is no refresh token or it is refused. */
  renew(): Promise<Tokens> {
    if (!this.canLogin) return this.login()
    return this.once(async (generation) => {
      const refreshToken = this.current?.refreshToken
      if (refreshToken !== undefined) {
        try {
          const answer = await this.grant({
            ...this.credentials(),
            grant_type: "refresh_token",
            refresh_token: refreshToken
          })
          return this.adopt(answer, "refresh", generation)
        } catch (error) {
          // Not reached: the token may still be good, and the refresh token unspent.
          if (error instanceof RfqError && error.status === 0) throw error
          // Refused (expired, replayed, revoked): the credentials still work.
        }
      }
      return this.adopt(await this.grant(this.credentials()), "login", generation)
    })
  }

  /** Forgets the tokens and stops renewing them. */
  forget(): void {
    this.generation++
    this.current = undefined
    this.pending = undefined
    this.stopTimer()
  }

  private credentials(): Record<string, string> {
    return {
      grant_type: "client_credentials",
      client_id: this.options.clientId!,
      client_secret: this.options.clientSecret!
    }
  }

  private once(request: (generation: number) => Promise<Tokens>): Promise<Tokens> {
    if (this.pending !== undefined) return this.pending
    const pending = request(this.generation).finally(() => {
      if (this.pending === pending) this.pending = undefined
    })
    this.pending = pending
    return pending
  }

  private adopt(answer: TokenAnswer, via: "login" | "refresh", generation: number): Tokens {
    // Logged out while the request ran: its answer is not wanted.
    if (generation !== this.generation) throw new RfqError(401, "logged-out", "logged out")
    const expiresAt = this.options.timers.now() + answer.expires_in * 1000
    this.current = {
      accessToken: answer.access_token,
      expiresAt,
      via,
      ...(answer.refresh_token === undefined ? {} : { refreshToken: answer.refresh_token })
    }
    // A token that lives no longer than the lead time is renewed half-way through its life.
    const lead = this.options.refreshAheadSeconds
    const ahead = lead < answer.expires_in ? lead : answer.expires_in / 2
    this.schedule((answer.expires_in - ahead) * 1000)
    const tokens: Tokens = { accessToken: answer.access_token, expiresAt, via }
    for (const listener of this.listeners) listener(tokens)
    return tokens
  }

  private schedule(delayMs: number): void {
    this.stopTimer()
    this.timer = this.options.timers.setTimeout(() => {
      this.timer = undefined
      this.renew().catch((error: unknown) => {
        // The service could not be reached: try again while the token may still be good.
        if (error instanceof RfqError && error.status === 0) this.schedule(RETRY_AFTER_NETWORK_FAILURE_MS)
      })
    }, delayMs)
  }

  private stopTimer(): void {
    if (this.timer !== undefined) this.options.timers.clearTimeout(this.timer)
    this.timer = undefined
  }

  /** One `POST /oauth/token`, waiting out a 429 up to `maxRateLimitRetries` times. */
  private async grant(fields: Record<string, string>): Promise<TokenAnswer> {
    for (let attempt = 0; ; attempt++) {
      let response: Response
      try {
        response = await this.options.fetch(`${this.options.baseUrl}/oauth/token`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams(fields).toString()
        })
      } catch (cause) {
        throw transportError("network", `token request failed: ${String(cause)}`, cause)
      }
      const text = await response.text()
      const body = parseJson(text)
      if (response.ok && isTokenAnswer(body)) return body
      if (response.status === 429 && attempt < this.options.maxRateLimitRetries) {
        await sleep(rateLimitWaitMs(response.headers, this.options.timers.now()))
        continue
      }
      throw response.ok
        ? new RfqError(response.status, "bad-token-answer", "the token answer has no access_token", body)
        : restError(response.status, body, text)
    }
  }
}

export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The longest a 429 is waited out, whatever its headers say (the service's window is a minute). */
export const MAX_RATE_LIMIT_WAIT_MS = 65_000

/**
 * How long to wait before trying again after a 429: until `X-RateLimit-Reset` (unix seconds), or
 * `Retry-After` (seconds), plus a little jitter so that many clients do not return at once.
 */
export const rateLimitWaitMs = (headers: Headers, now: number): number => {
  const reset = Number(headers.get("x-ratelimit-reset"))
  const retryAfter = Number(headers.get("retry-after"))
  const base =
    Number.isFinite(reset) && reset > 0
      ? reset * 1000 - now
      : Number.isFinite(retryAfter) && retryAfter > 0
        ? retryAfter * 1000
        : 1000
  return Math.min(MAX_RATE_LIMIT_WAIT_MS, Math.max(0, base) + Math.floor(Math.random() * 250))
}
