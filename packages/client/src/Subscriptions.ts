export interface Notification {
  readonly channel: string
  readonly seq: number
  readonly data: unknown
}

/**
 * The session's channels and who listens to each: what is subscribed again after a reconnect, and
 * where a notification goes. A listener that throws does not stop the others (`onListenerError`).
 */
export class Subscriptions {
  private readonly listeners = new Map<string, Set<(n: Notification) => void>>()

  add(channels: ReadonlyArray<string>, listener: (n: Notification) => void): void {
    for (const channel of channels) {
      const set = this.listeners.get(channel) ?? new Set()
      set.add(listener)
      this.listeners.set(channel, set)
    }
  }

  remove(channels: ReadonlyArray<string>): void {
    for (const channel of channels) this.listeners.delete(channel)
  }

  channels(): ReadonlyArray<string> {
    return [...this.listeners.keys()]
  }

  dispatch(notification: Notification, onListenerError: (cause: unknown) => void): void {
    for (const listener of this.listeners.get(notification.channel) ?? []) {
      try {
        listener(notification)
      } catch (cause) {
        onListenerError(cause)
      }
    }
  }
}
