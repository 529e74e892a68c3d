import type { EngineEvent } from "../services/Events.js"
import { type RfqEffect, type RfqStateValue, publicStatus } from "./RfqMachine.js"
import type { RfqState } from "./RfqRecord.js"
import type { RfqView } from "./RfqView.js"
import { printsOnTape } from "./TradeTapeView.js"

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
  let printed = false
  let filled: RfqState["quotes"][number] | undefined
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
          const quote = { ...c.quote, status: c.status as "filled" }
          if (c.status === "filled") filled = quote
          out.push({
            type: "quote",
            // A quote expired at its `validUntil` (the RFQ still open) is updated, not gone: its
            // maker and the taker are told its new state (issue 16).
            event:
              c.status === "filled" || (c.status === "expired" && value === "open") ? "updated" : "deleted",
            seq,
            view,
            quote
          })
        }
        break
      }
      case "tradeFinished": {
        const p = e.params as { outcome: string }
        printed = p.outcome !== "refused"
        rfqChanged = true
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
  // The public tape's print travels with the SETTLED step (over NATS too, under the step's id).
  if (printed && filled !== undefined && view.trade !== undefined && printsOnTape(view.trade)) {
    out.push({ type: "trade", event: "created", seq, view, quote: filled })
  }
  return out
}
