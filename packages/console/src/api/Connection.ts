import { type Notification, RfqClient, type RfqSession } from "@rfq/client"
import type { EndpointInput, EndpointName, EndpointOutput } from "@rfq/engine/api"

/** Every channel the console shows: a desk may take and make, so it listens to both sides. */
export const CONSOLE_CHANNELS = ["rfq.taker", "rfq_quote.taker", "rfq.maker", "rfq_quote.maker"] as const
/**
 * The venue wave's channels (issue 16): the public tape and the desk's market-maker protection.
 * Subscribed on their own, so a service without them still gives the console its core channels.
 */
export const WAVE_CHANNELS = ["trades", "mmp.maker"] as const

export type SessionStatus = "connecting" | "open" | "reconnecting" | "closed"

/** What a screen hears: a notification, or "resync" when notifications may have been missed. */
export type LiveEvent =
  | { readonly kind: "notification"; readonly notification: Notification }
  | { readonly kind: "resync" }

/**
 * One signed-in user: REST calls and one live WebSocket session, both through `@rfq/client`. The
 * tokens live inside the client object only (never in localStorage or a cookie), so closing or
 * reloading the tab signs the user out; that is the point of "token in memory only".
 *
 * Screens read data over REST and use notifications as triggers or patches; after a gap in `seq`
 * or a reconnect every screen is told to re-read ("resync"), so nothing shown stays stale.
 */
export class Connection {
  private readonly listeners = new Set<(event: LiveEvent) => void>()
  private readonly statusListeners = new Set<(status: SessionStatus) => void>()
  private currentStatus: SessionStatus = "connecting"
  private session: RfqSession | undefined
  private closed = false

  private constructor(
    readonly clientId: string,
    private readonly client: RfqClient
  ) {}

  /** Signs in with client credentials; fails with the service's error (an `RfqError`). */
  static async signIn(baseUrl: string, clientId: string, clientSecret: string): Promise<Connection> {
    const client = new RfqClient({ baseUrl, clientId, clientSecret })
    await client.login()
    const connection = new Connection(clientId, client)
    connection.openSession()
    return connection
  }

  get status(): SessionStatus {
    return this.currentStatus
  }

  call<K extends EndpointName>(name: K, input: EndpointInput<K>): Promise<EndpointOutput<K>> {
    return this.client.call(name, input)
  }

  /** Listens to live events; answers the function that stops listening. */
  listen(listener: (event: LiveEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  onStatus(listener: (status: SessionStatus) => void): () => void {
    this.statusListeners.add(listener)
    return () => this.statusListeners.delete(listener)
  }

  /** Signs out: the session closes and the tokens are forgotten. */
  async close(): Promise<void> {
    this.closed = true
    this.listeners.clear()
    this.statusListeners.clear()
    const session = this.session
    this.session = undefined
    try {
      await session?.close()
    } finally {
      this.client.logout()
    }
  }

  private openSession(): void {
    const session = this.client.session()
    this.session = session
    let wasOpen = false
    session.onStatus((status) => {
      if (this.closed) return
      // A reconnect re-subscribes inside the client; what happened meanwhile is read again.
      if (status === "open" && wasOpen) this.emit({ kind: "resync" })
      if (status === "open") wasOpen = true
      this.setStatus(status)
    })
    session.onGap(() => this.emit({ kind: "resync" }))
    const onNotification = (notification: Notification) => this.emit({ kind: "notification", notification })
    session
      .subscribe(CONSOLE_CHANNELS, onNotification)
      .then(() => this.setStatus("open"))
      .catch(() => this.setStatus("closed"))
    session.subscribe(WAVE_CHANNELS, onNotification).catch(() => undefined)
  }

  private setStatus(status: SessionStatus): void {
    if (this.currentStatus === status) return
    this.currentStatus = status
    for (const listener of this.statusListeners) listener(status)
  }

  private emit(event: LiveEvent): void {
    for (const listener of this.listeners) listener(event)
  }
}
