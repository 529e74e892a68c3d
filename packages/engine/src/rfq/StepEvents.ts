import type { EngineEvent } from "../services/Events.js"
import { type RfqEffect, type RfqStateValue, publicStatus } from "./RfqMachine.js"
import type { RfqState } from "./RfqRecord.js"
import type { RfqView } from "./RfqView.js"

/** The RFQ as its actor holds it, in the shape the views render. */
export const viewOf = (value: RfqStateValue, state: RfqState, extraQuotes?: RfqView["quotes"]): RfqView => {
  const status = publicStatus(value)
  return {
    rfq: state.rfq,
    status: status === "deleted" ? "cancelled" : status,
    quotes: extraQuotes ?? Object.values(state.quotes),
    // A trade still settling is not shown: its outcome (and filledAmount) is not known yet.
    trade: value === "settling" ? undefined : state.trade
  }
}

/** The engine events a committed step produces, rendered later per recipient. */
export const eventsOf = (
  value: RfqStateValue,
  state: RfqState,
  seq: number,
  effects: ReadonlyArray<RfqEffect>
): Array<EngineEvent> => {
  const view = viewOf(value, state)
  const out: Array<EngineEvent> = []
  let rfqChanged = false
  for (const e of effects) {
    switch (e.type) {
      case "quoteStored": {
        const p = e.params as { quote: RfqState["quotes"][number]; previous?: unknown }
        out.push({
          type: "quote",
          event: p.previous === undefined ? "created" : "updated",
          seq,
          view,
          quote: p.quote
        })
        break
      }
      case "quotesClosed": {
        const p = e.params as { closed: ReadonlyArray<{ quote: RfqState["quotes"][number]; status: string }> }
        for (const c of p.closed) {
          out.push({
            type: "quote",
            event: c.status === "filled" ? "updated" : "deleted",
            seq,
            view,
            quote: { ...c.quote, status: c.status as "filled" }
          })
        }
        break
      }
      case "rfqDeleted":
        out.push({ type: "rfq", event: "deleted", seq, view })
        break
      default:
        rfqChanged = true
    }
  }
  if (rfqChanged) out.push({ type: "rfq", event: "updated", seq, view })
  return out
}
