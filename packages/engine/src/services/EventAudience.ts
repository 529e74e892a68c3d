import type { Caller, RfqRecord } from "../rfq/RfqRecord.js"
import { invitedMakerIds } from "../rfq/Visibility.js"

/**
 * Who could hear anything of some engine events on some channel (`Events.ts#renderEvent`): a
 * caller of one of the RFQs' taker desks or with a maker id invited on one of them (`canSee`, the
 * rule every RFQ channel starts with), and, when a trade is among the events, every listener of
 * the public tape. Anyone else hears nothing of them, so a subscriber with no listener in the
 * audience can leave them unread: every host receives every step of every RFQ (issue 15), and
 * only the hosts holding a session of the taker or of an invited maker, or a tape listener for a
 * trade, need to decode a step at all.
 */
export interface EventAudience {
  readonly takerDeskIds: ReadonlyArray<number>
  readonly makerIds: ReadonlyArray<string>
  readonly trade: boolean
}

/** What the audience depends on of an engine event (`Events.ts#EngineEvent`; this module stays below it). */
interface AudienceEvent {
  readonly type: string
  readonly view: { readonly rfq: RfqRecord }
}

/** The audience of `events`: the union over their RFQs (a step's events share one view, read once). */
export const audienceOf = (events: ReadonlyArray<AudienceEvent>): EventAudience => {
  const takerDeskIds: Array<number> = []
  const makerIds = new Set<string>()
  let trade = false
  let lastView: AudienceEvent["view"] | undefined
  for (const event of events) {
    if (event.type === "trade") trade = true
    if (event.view === lastView) continue
    lastView = event.view
    const { rfq } = event.view
    if (!takerDeskIds.includes(rfq.takerDeskId)) takerDeskIds.push(rfq.takerDeskId)
    for (const id of invitedMakerIds(rfq)) makerIds.add(id)
  }
  return { takerDeskIds, makerIds: [...makerIds], trade }
}

/**
 * What a subscriber declares it may want (`Events.ts#EventsService.subscribeFor`): false only for
 * an audience none of its listeners is in.
 */
export type EventInterest = (audience: EventAudience) => boolean

/**
 * The listeners of a fan-out, indexed by what decides whether they could hear a step (`canSee`:
 * desk and maker id; the tape: its channel), so that `wants` costs a few lookups however many
 * listeners there are. A listener is a channel and a caller; each `add` needs its `remove`.
 */
export class AudienceIndex {
  private readonly desks = new Map<number, number>()
  private readonly makers = new Map<string, number>()
  private tape = 0

  /** `channel` is one of `Events.ts#Channel`. */
  add(channel: string, caller: Caller): void {
    this.count(channel, caller, 1)
  }

  remove(channel: string, caller: Caller): void {
    this.count(channel, caller, -1)
  }

  /** Whether any listener could hear anything of events with this audience. */
  readonly wants: EventInterest = (audience) => {
    if (audience.trade && this.tape > 0) return true
    for (const deskId of audience.takerDeskIds) if (this.desks.has(deskId)) return true
    for (const makerId of audience.makerIds) if (this.makers.has(makerId)) return true
    return false
  }

  private count(channel: string, caller: Caller, by: 1 | -1): void {
    // Market-maker protection's notices are not engine events: its listeners want no step.
    if (channel === "mmp.maker") return
    if (channel === "trades") {
      this.tape += by
      return
    }
    bump(this.desks, caller.deskId, by)
    if (caller.makerId !== undefined) bump(this.makers, caller.makerId, by)
  }
}

const bump = <K>(counts: Map<K, number>, key: K, by: number): void => {
  const next = (counts.get(key) ?? 0) + by
  if (next > 0) counts.set(key, next)
  else counts.delete(key)
}
