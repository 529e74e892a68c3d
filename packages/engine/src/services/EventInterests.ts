import { Effect, type Scope } from "effect"
import { audienceOf, type EventAudience, type EventInterest } from "./EventAudience.js"

/**
 * What the subscribers of an event hub want, for the lifetime of their subscriptions: a plain
 * subscription wants everything; one made with an interest wants what the interest says. Events
 * nobody wants need not be offered (nor, from the stream of several hosts, decoded).
 */
export class EventInterests {
  private everything = 0
  private readonly interests = new Map<EventInterest, number>()

  /** Counts `interest` (undefined: everything) until the scope closes. */
  register(interest: EventInterest | undefined): Effect.Effect<void, never, Scope.Scope> {
    return Effect.acquireRelease(
      Effect.sync(() => this.change(interest, 1)),
      () => Effect.sync(() => this.change(interest, -1))
    )
  }

  /** Whether any subscriber may want events with this audience. */
  wants(audience: EventAudience): boolean {
    if (this.everything > 0) return true
    for (const interest of this.interests.keys()) if (interest(audience)) return true
    return false
  }

  /** Whether any subscriber may want `events` (their audience is worked out only when it matters). */
  wantsEvents(events: Parameters<typeof audienceOf>[0]): boolean {
    if (this.everything > 0) return true
    return this.interests.size > 0 && this.wants(audienceOf(events))
  }

  private change(interest: EventInterest | undefined, by: 1 | -1): void {
    if (interest === undefined) {
      this.everything += by
      return
    }
    const next = (this.interests.get(interest) ?? 0) + by
    if (next > 0) this.interests.set(interest, next)
    else this.interests.delete(interest)
  }
}
