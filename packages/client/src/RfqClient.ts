import { type EndpointInput, type EndpointName, type EndpointOutput, endpoints } from "@rfq/engine/api"
import { restRequest } from "./RestRequest.js"
import { RfqError, restError, transportError } from "./RfqError.js"
import { RfqSession, type SessionOptions } from "./RfqSession.js"
import { platformTimers, sleep, type Timers } from "./Timers.js"
import { parseJson, rateLimitWaitMs, TokenKeeper, type Tokens } from "./TokenKeeper.js"
import type { WebSocketLike } from "./WebSocketLike.js"

export interface RfqClientOptions {
  /** e.g. `http://127.0.0.1:8080`; `""` in a browser page served by the host (same origin). */
  readonly baseUrl: string
  readonly clientId?: string
  readonly clientSecret?: string
  /** A token got elsewhere, used as it is (never renewed). */
  readonly accessToken?: string
  readonly fetch?: typeof globalThis.fetch
  /** Node 20 has no global WebSocket: pass `ws`'s (`import WebSocket from "ws"`). */
  readonly WebSocket?: WebSocketLike
  /** How long before expiry the access token is renewed (default 60 s; half-way for a token that lives no longer). */
  readonly refreshAheadSeconds?: number
  /** How many times a call refused with 429 waits until `X-RateLimit-Reset` and tries again (default 3). */
  readonly maxRateLimitRetries?: number
  /** Told of each wait for a rate limit's reset (for logs and metrics). */
  readonly onRateLimited?: (wait: RateLimitWait) => void
  readonly timers?: Timers
}

export interface RateLimitWait {
  readonly operation: string
  readonly waitMs: number
  readonly attempt: number
}

const DEFAULT_REFRESH_AHEAD_SECONDS = 60
const DEFAULT_MAX_RATE_LIMIT_RETRIES = 3

/**
 * The typed client: every operation of the endpoint table (`@rfq/engine/api`) by its JSON-RPC
 * name, over REST (`call`) or over a WebSocket session (`session().call`), its input and answer
 * typed by the same schemas the service validates with. Adding an operation to the table adds it
 * here.
 *
 * Failures reject with `RfqError`. A call refused with 429 waits until the rate limit's reset and
 * is sent again (the service did not run it). A call refused with 401 while the client holds
 * credentials is sent once more with a fresh token when its token is no longer the current one or
 * a new login succeeds (a 401 is answered before anything runs).
 */
export class RfqClient {
  readonly baseUrl: string
  private readonly fetchImpl: typeof globalThis.fetch
  private readonly timers: Timers
  private readonly tokens: TokenKeeper
  private readonly maxRateLimitRetries: number
  private readonly sessions = new Set<RfqSession>()

  constructor(readonly options: RfqClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "")
    // A browser's fetch must be called on the window: keep it bound.
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
    this.timers = options.timers ?? platformTimers
    this.maxRateLimitRetries = options.maxRateLimitRetries ?? DEFAULT_MAX_RATE_LIMIT_RETRIES
    this.tokens = new TokenKeeper({
      baseUrl: this.baseUrl,
      fetch: this.fetchImpl,
      timers: this.timers,
      refreshAheadSeconds: options.refreshAheadSeconds ?? DEFAULT_REFRESH_AHEAD_SECONDS,
      maxRateLimitRetries: this.maxRateLimitRetries,
      ...(options.clientId === undefined ? {} : { clientId: options.clientId }),
      ...(options.clientSecret === undefined ? {} : { clientSecret: options.clientSecret }),
      ...(options.accessToken === undefined ? {} : { accessToken: options.accessToken })
    })
  }

  /** The client-credentials grant (`POST /oauth/token`); the token is then renewed before it expires. */
  async login(): Promise<void> {
    await this.tokens.login()
  }

  /** Forgets the tokens, stops renewing them and closes the sessions of this client. */
  logout(): void {
    this.tokens.forget()
    for (const session of this.sessions) void session.close()
    this.sessions.clear()
  }

  /** The access token in use, logging in first when there is none (for a caller's own requests). */
  accessToken(): Promise<string> {
    return this.tokens.token()
  }

  /** Told of every new token (a login, a refresh); sessions use it to renew theirs. */
  onTokens(listener: (tokens: Tokens) => void): () => void {
    return this.tokens.onTokens(listener)
  }

  /** Renews the token now (refresh grant, else a fresh login). */
  renewToken(): Promise<Tokens> {
    return this.tokens.renew()
  }

  /** Whether a 401 with `token` may be tried once more with a newer one. */
  get canLogin(): boolean {
    return this.tokens.canLogin
  }

  /** Whether `token` is the one in use. */
  isCurrentToken(token: string): boolean {
    return this.tokens.isCurrent(token)
  }

  /** One operation over REST. */
  async call<K extends EndpointName>(name: K, input: EndpointInput<K>): Promise<EndpointOutput<K>> {
    const endpoint = endpoints[name] as (typeof endpoints)[EndpointName] | undefined
    if (endpoint === undefined) throw new RfqError(404, "unknown-operation", `unknown operation ${name}`)
    const request = restRequest(endpoint, input)
    let renewedAfter401 = false
    for (let attempt = 0; ; attempt++) {
      const token = await this.tokens.token()
      let response: Response
      try {
        response = await this.fetchImpl(`${this.baseUrl}${request.target}`, {
          method: request.method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(request.body === undefined ? {} : { "content-type": "application/json" })
          },
          ...(request.body === undefined ? {} : { body: request.body })
        })
      } catch (cause) {
        throw transportError("network", `${request.method} ${request.target}: ${String(cause)}`, cause)
      }
      const text = await response.text()
      const body = parseJson(text)
      if (response.ok) {
        if (body === undefined) {
          throw new RfqError(response.status, "bad-answer", "the answer is not JSON", text.slice(0, 200))
        }
        return body as EndpointOutput<K>
      }
      if (response.status === 429 && attempt < this.maxRateLimitRetries) {
        const waitMs = rateLimitWaitMs(response.headers, this.timers.now())
        this.options.onRateLimited?.({ operation: name, waitMs, attempt: attempt + 1 })
        await sleep(waitMs)
        continue
      }
      if (response.status === 401 && !renewedAfter401 && this.tokens.canLogin) {
        renewedAfter401 = true
        // Another call may have renewed it meanwhile; otherwise log in afresh.
        if (this.tokens.isCurrent(token)) await this.tokens.login()
        continue
      }
      throw restError(response.status, body, text)
    }
  }

  /** A JSON-RPC session over `/ws/v1`; it connects at once (see `RfqSession`). */
  session(options: SessionOptions = {}): RfqSession {
    const WebSocketImpl = this.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketLike }).WebSocket
    if (WebSocketImpl === undefined) {
      throw new TypeError(
        "no WebSocket implementation: pass one as RfqClientOptions.WebSocket (ws in Node 20)"
      )
    }
    const session = new RfqSession(this, WebSocketImpl, options)
    this.sessions.add(session)
    session.onStatus((status) => {
      if (status === "closed") this.sessions.delete(session)
    })
    return session
  }

  /** The WebSocket URL of the service: the base URL's origin with ws(s) and `/ws/v1`. */
  webSocketUrl(): string {
    const base =
      this.baseUrl === "" ? (globalThis as { location?: { origin: string } }).location?.origin : this.baseUrl
    if (base === undefined) throw new TypeError("baseUrl is empty and there is no page location to use")
    return `${base.replace(/^http/, "ws")}/ws/v1`
  }
}
