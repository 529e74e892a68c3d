import type { EndpointInput, EndpointName, EndpointOutput } from "@rfq/engine/api"
import { type BackoffOptions, backoffDelayMs } from "./Backoff.js"
import { deferred } from "./Deferred.js"
import { isRecord, RfqError, transportError } from "./RfqError.js"
import { RpcConnection } from "./RpcConnection.js"
import { type Gap, SeqTracker } from "./SeqTracker.js"
import { type Notification, Subscriptions } from "./Subscriptions.js"
import { sleep } from "./Timers.js"
import type { Tokens } from "./TokenKeeper.js"
import { MAX_RATE_LIMIT_WAIT_MS } from "./TokenKeeper.js"
import type { WebSocketLike } from "./WebSocketLike.js"

/**
 * A JSON-RPC session over `/ws/v1` that stays up: it authenticates each connection with the
 * client's access token (`auth {token}`), heartbeats (`RpcConnection.ts`), renews the session's
 * token whenever the client renews its own (`auth/refresh {token}`, so the session never reaches
 * 4001), and after any drop (a lost network, a restart, 4000/4001/4003) reconnects with
 * exponential back-off and jitter, authenticates again, turns cancel-on-disconnect back on when
 * asked to, re-subscribes to every channel and reports the gap (`SeqTracker.ts`).
 *
 * Calls made while the session is (re)connecting wait until it is open. A call in flight when the
 * connection drops is rejected with status 0 (`disconnected`) rather than sent again: the service
 * may have run it. Only idempotent methods (subscribe, unsubscribe) are repeated. A call refused
 * by the WebSocket rate limit (-32603 `Rate limit exceeded`; it did not run) waits until the
 * limit's `reset` and is sent again, up to `maxRateLimitRetries` times.
 *
 * The session ends (status `closed`) on `close()`, or when it can no longer authenticate (the
 * client's credentials or token are refused); `onError` then says why.
 *
 * A little over 300 lines: the reconnect cycle (connect, authenticate, restore, lose) reads best
 * in one place; the connection, the channel registry and the seq tracking are their own files.
 */

export type { Notification } from "./Subscriptions.js"

/** What a session needs of its client (`RfqClient` is one): its tokens and its address. */
export interface SessionClient {
  readonly accessToken: () => Promise<string>
  readonly onTokens: (listener: (tokens: Tokens) => void) => () => void
  readonly renewToken: () => Promise<Tokens>
  readonly canLogin: boolean
  readonly isCurrentToken: (token: string) => boolean
  readonly webSocketUrl: () => string
}

export interface SessionOptions {
  /** Heartbeat period (default 25 s; the service closes a session silent for 30 s). */
  readonly heartbeatIntervalMs?: number
  readonly reconnect?: BackoffOptions
  /** `v1/cancel-on-disconnect {enabled: true}` on every connection (trader role). */
  readonly cancelOnDisconnect?: boolean
  /** Default: the client's base URL with ws(s) and `/ws/v1`. */
  readonly url?: string
  /** Default: the client's setting (3). */
  readonly maxRateLimitRetries?: number
}

export type SessionStatus = "connecting" | "open" | "reconnecting" | "closed"

const DEFAULT_HEARTBEAT_INTERVAL_MS = 25_000
const DEFAULT_MAX_RATE_LIMIT_RETRIES = 3

export class RfqSession {
  private status: SessionStatus = "connecting"
  private connection: RpcConnection | undefined
  private opened = deferred()
  private readonly subscriptions = new Subscriptions()
  private readonly seq = new SeqTracker()
  private readonly gapListeners = new Set<(gap: Gap) => void>()
  private readonly statusListeners = new Set<(s: SessionStatus) => void>()
  private readonly errorListeners = new Set<(e: RfqError) => void>()
  private attempts = 0
  private confirmedExpiry: number | undefined
  private everOpened = false
  private closing = false
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined
  private readonly stopTokenWatch: () => void

  constructor(
    private readonly client: SessionClient,
    private readonly WebSocketImpl: WebSocketLike,
    private readonly options: SessionOptions
  ) {
    this.stopTokenWatch = client.onTokens((tokens) => void this.renewSessionToken(tokens.accessToken))
    void this.connect()
  }

  /** One operation as a JSON-RPC method; the answer is exactly REST's. */
  call<K extends EndpointName>(name: K, input: EndpointInput<K>): Promise<EndpointOutput<K>> {
    return this.request(name, input) as Promise<EndpointOutput<K>>
  }

  /** Any method by name (`v1/cancel-on-disconnect`, or one the table does not have yet). */
  async request(method: string, params: unknown = {}): Promise<unknown> {
    const retries = this.options.maxRateLimitRetries ?? DEFAULT_MAX_RATE_LIMIT_RETRIES
    for (let attempt = 0; ; attempt++) {
      const connection = await this.opened.promise
      try {
        return await connection.request(method, params)
      } catch (error) {
        const reset = rateLimitReset(error)
        if (reset === undefined || attempt >= retries) throw error
        await sleep(Math.min(MAX_RATE_LIMIT_WAIT_MS, Math.max(0, reset * 1000 - Date.now()) + 100))
      }
    }
  }

  /**
   * Subscribes `onNotification` to `channels`; they are subscribed again after every reconnect. A
   * name the service refuses rejects the call and is not kept. The listener is added once the
   * service has accepted: its reply comes before any notification of those channels.
   */
  async subscribe(channels: ReadonlyArray<string>, onNotification: (n: Notification) => void): Promise<void> {
    await this.idempotent("v1/subscribe", { channels })
    this.subscriptions.add(channels, onNotification)
  }

  /** Unsubscribes every listener of `channels`. */
  async unsubscribe(channels: ReadonlyArray<string>): Promise<void> {
    this.subscriptions.remove(channels)
    await this.idempotent("v1/unsubscribe", { channels })
  }

  onGap(listener: (gap: Gap) => void): () => void {
    this.gapListeners.add(listener)
    return () => void this.gapListeners.delete(listener)
  }

  onStatus(listener: (s: SessionStatus) => void): () => void {
    this.statusListeners.add(listener)
    return () => void this.statusListeners.delete(listener)
  }

  /** Why the session ended (or why a listener failed); the session's own failures only. */
  onError(listener: (e: RfqError) => void): () => void {
    this.errorListeners.add(listener)
    return () => void this.errorListeners.delete(listener)
  }

  /** The session token's expiry (unix ms) as the service confirmed it at the last `auth/refresh`. */
  get expiresAt(): number | undefined {
    return this.confirmedExpiry
  }

  get currentStatus(): SessionStatus {
    return this.status
  }

  /** Closes the connection normally (1000) and stops reconnecting; waiting calls are rejected. */
  async close(): Promise<void> {
    if (this.closing) return
    this.closing = true
    this.stopTokenWatch()
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer)
    const connection = this.connection
    this.connection = undefined
    await connection?.close()
    this.end(transportError("closed", "the session was closed"))
  }

  /** A method that may be sent again after a drop: it is, once the session is open again. */
  private async idempotent(method: string, params: unknown): Promise<unknown> {
    for (;;) {
      const opened = this.opened.promise
      try {
        return await this.request(method, params)
      } catch (error) {
        if (!(error instanceof RfqError && error.code === "disconnected") || this.closing) throw error
        // Wait until the lost connection has ended (and been replaced), not in a tight loop.
        await (await opened).closed
      }
    }
  }

  private async connect(): Promise<void> {
    if (this.closing) return
    let connection: RpcConnection | undefined
    let adopted = false
    try {
      const token = await this.client.accessToken()
      connection = await RpcConnection.open(
        this.WebSocketImpl,
        this.options.url ?? this.client.webSocketUrl(),
        this.options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS,
        {
          onNotification: (method, params) => this.notification(method, params),
          onClose: () => this.lost(connection!)
        }
      )
      if (this.closing) return void (await connection.close())
      this.connection = connection
      adopted = true
      await this.authenticate(connection, token)
      if (this.options.cancelOnDisconnect === true) {
        await connection.request("v1/cancel-on-disconnect", { enabled: true })
      }
      // Numbering starts again at 1 on this connection, whatever was subscribed before.
      const gap = this.seq.reconnected()
      const channels = this.subscriptions.channels()
      if (channels.length > 0) await this.resubscribe(connection, channels)
      if (this.everOpened && channels.length > 0) this.emitGap(gap)
      this.everOpened = true
      this.attempts = 0
      this.setStatus("open")
      this.opened.resolve(connection)
    } catch (error) {
      if (isFatal(error)) return this.end(error as RfqError)
      // Not reached: try again later. Dropped while setting up: its close handler already did.
      // A step refused otherwise: drop the connection, whose close handler tries again.
      if (!adopted) this.retryLater()
      else if (this.connection === connection) connection!.drop("setup failed")
    }
  }

  /**
   * The channels again on a new connection. Should the service now refuse one (a new version
   * without it), the others are kept: each is tried alone, and a refused one is dropped and
   * reported through `onError` rather than ending the session.
   */
  private async resubscribe(connection: RpcConnection, channels: ReadonlyArray<string>): Promise<void> {
    try {
      await connection.request("v1/subscribe", { channels })
    } catch (error) {
      if (!(error instanceof RfqError && error.status === 400)) throw error
      for (const channel of channels) {
        try {
          await connection.request("v1/subscribe", { channels: [channel] })
        } catch (refusal) {
          if (!(refusal instanceof RfqError && refusal.status === 400)) throw refusal
          this.subscriptions.remove([channel])
          for (const listener of this.errorListeners) listener(refusal)
        }
      }
    }
  }

  /** `auth {token}`; a refused token is renewed once before the refusal counts. */
  private async authenticate(connection: RpcConnection, token: string): Promise<void> {
    try {
      await connection.request("auth", { token })
    } catch (error) {
      if (!(error instanceof RfqError && error.status === 401 && this.client.canLogin)) throw error
      const renewed = this.client.isCurrentToken(token)
        ? (await this.client.renewToken()).accessToken
        : await this.client.accessToken()
      await connection.request("auth", { token: renewed })
    }
  }

  private async renewSessionToken(token: string): Promise<void> {
    const connection = this.connection
    if (connection === undefined || this.status !== "open") return
    try {
      const answer = await connection.request("auth/refresh", { token })
      if (isRecord(answer) && typeof answer["expiresAt"] === "number")
        this.confirmedExpiry = answer["expiresAt"]
    } catch (error) {
      if (error instanceof RfqError && error.code === -32601) {
        await connection.request("auth", { token }).catch(() => connection.drop("re-authentication failed"))
      } else if (!(error instanceof RfqError && error.code === "disconnected")) {
        connection.drop("token renewal refused")
      }
    }
  }

  private lost(connection: RpcConnection): void {
    if (this.connection !== connection) return
    this.connection = undefined
    if (this.closing) return
    if (this.status === "open") this.opened = deferred()
    this.retryLater()
  }

  private retryLater(): void {
    if (this.closing) return
    this.setStatus(this.everOpened ? "reconnecting" : "connecting")
    const delay = backoffDelayMs(this.attempts++, this.options.reconnect)
    this.reconnectTimer = setTimeout(() => void this.connect(), delay)
  }

  private end(error: RfqError): void {
    this.closing = true
    this.stopTokenWatch()
    this.connection?.drop("session ended")
    this.opened.reject(error)
    this.opened = deferred()
    this.opened.reject(error)
    if (error.code !== "closed") for (const listener of this.errorListeners) listener(error)
    this.setStatus("closed")
  }

  private notification(method: string, params: unknown): void {
    if (method !== "v1/subscription" || !isRecord(params)) return
    const { channel, seq, data } = params
    if (typeof channel !== "string" || typeof seq !== "number") return
    const gap = this.seq.next(seq)
    if (gap !== undefined) this.emitGap(gap)
    this.subscriptions.dispatch({ channel, seq, data }, (cause) => {
      const error = new RfqError(0, "listener", `a listener of ${channel} threw: ${String(cause)}`, cause)
      for (const onError of this.errorListeners) onError(error)
    })
  }

  private emitGap(gap: Gap): void {
    for (const listener of this.gapListeners) listener(gap)
  }

  private setStatus(status: SessionStatus): void {
    if (this.status === status) return
    this.status = status
    for (const listener of this.statusListeners) listener(status)
  }
}

/** A refusal that reconnecting cannot cure: credentials or token refused, access denied. */
const isFatal = (error: unknown): boolean =>
  error instanceof RfqError && (error.status === 401 || error.status === 403 || error.status === 400)

/** The `reset` (unix seconds) of a WebSocket rate-limit refusal, else undefined. */
const rateLimitReset = (error: unknown): number | undefined =>
  error instanceof RfqError &&
  error.status === 429 &&
  isRecord(error.reason) &&
  typeof error.reason["reset"] === "number"
    ? error.reason["reset"]
    : undefined
