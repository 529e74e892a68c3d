import { BigDecimal } from "effect"
import * as fc from "fast-check"
import { decString } from "../../src/rfq/Dec.js"
import type { QuoteRecord } from "../../src/rfq/RfqRecord.js"
import type { RfqView } from "../../src/rfq/RfqView.js"
import type { EngineEvent } from "../../src/services/Events.js"
import {
  bareRfqRecord,
  pendingTrade,
  quoteRecord,
  type ReferenceData,
  rfqRecord,
  settledTrade
} from "../support/records.js"

/**
 * Engine events for the cluster tests, built with the storage fixtures' record builders over
 * reference ids that need no database (the events never reach one).
 */
export const reference: ReferenceData = {
  takers: [
    { deskId: 1, userId: 11, credentials: { DBT: [101, 102], BULL: 103 } },
    { deskId: 2, userId: 21, credentials: { DBT: [201, 202], BULL: 203 } }
  ],
  makers: [
    { makerId: "maker-1", deskId: 3, userId: 31, credentials: { DBT: 301, BULL: 302 } },
    { makerId: "maker-2", deskId: 4, userId: 41, credentials: { DBT: 401, BULL: 402 } },
    { makerId: "maker-3", deskId: 5, userId: 51, credentials: { DBT: 501, BULL: 502 } }
  ]
}

/** An open RFQ's view with one quote priced `price`, and the events of step `seq` on it. */
export const stepEvents = (rfqId: number, seq: number, price = "0.0505"): Array<EngineEvent> => {
  const rfq = rfqRecord(reference, rfqId)
  const quote = quoteRecord(rfq, reference.makers[0], rfqId * 100 + seq, { price })
  const view: RfqView = { rfq, status: "open", quotes: [quote], trade: undefined }
  return seq === 1
    ? [{ type: "rfq", event: "created", seq, view }]
    : [
        { type: "quote", event: "updated", seq, view, quote },
        { type: "rfq", event: "updated", seq, view }
      ]
}

/** Step `seq` of RFQ `rfqId` as `stepEvents` makes it, but asked by taker desk `takerDeskId` of makers `makers`. */
export const stepEventsOf = (
  rfqId: number,
  seq: number,
  takerDeskId: number,
  makers: ReadonlyArray<string>
): Array<EngineEvent> =>
  stepEvents(rfqId, seq).map((event): EngineEvent => {
    const rfq = { ...event.view.rfq, takerDeskId, makers: { DBT: makers } }
    return { ...event, view: { ...event.view, rfq } }
  })

/** Decimal strings of any sign and scale, canonical (as records hold them). */
export const decimalArb: fc.Arbitrary<string> = fc
  .tuple(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.integer({ min: -4, max: 18 }))
  .map(([value, scale]) => decString(BigDecimal.make(value, scale)))

const optionalLabel = fc.option(fc.string({ maxLength: 12 }), { nil: undefined })

const quoteArb = (rfqView: { rfq: RfqView["rfq"] }, id: number): fc.Arbitrary<QuoteRecord> =>
  fc
    .record({
      maker: fc.constantFrom(...reference.makers),
      price: decimalArb,
      amount: decimalArb,
      label: optionalLabel,
      direction: fc.constantFrom("buy" as const, "sell" as const),
      settlementOption: fc.constantFrom("DBT" as const, "BULL" as const),
      status: fc.constantFrom("active" as const, "filled" as const, "cancelled" as const, "expired" as const),
      // A quote's `validUntil` (issue 16): absent, `undefined`, or unix ms.
      validUntil: fc.option(fc.integer({ min: 1, max: 2 ** 45 }), { nil: undefined })
    })
    .map(({ maker, ...over }) => quoteRecord(rfqView.rfq, maker, id, over))

/** Views of every shape: bare or full RFQs, optional fields present or `undefined`, 0–3 quotes, a trade or none. */
export const viewArb: fc.Arbitrary<RfqView> = fc
  .record({
    id: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    bare: fc.boolean(),
    amount: decimalArb,
    markPrice: decimalArb,
    label: optionalLabel,
    status: fc.constantFrom(
      "open" as const,
      "filled" as const,
      "filledPartial" as const,
      "cancelled" as const
    ),
    quoteCount: fc.integer({ min: 0, max: 3 }),
    trade: fc.constantFrom("none", "pending", "settled")
  })
  .chain(({ id, bare, amount, markPrice, label, status, quoteCount, trade }) => {
    const over = { amount, markPrice, label }
    const rfq = bare ? bareRfqRecord(reference, id, over) : rfqRecord(reference, id, over)
    return fc
      .tuple(...Array.from({ length: quoteCount }, (_, i) => quoteArb({ rfq }, id * 10 + i)))
      .chain((quotes) =>
        fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }).map((filled): RfqView => {
          const first = quotes[0]
          if (trade === "none" || first === undefined) return { rfq, status, quotes, trade: undefined }
          const pending = pendingTrade(rfq, first, id, [1, 2], rfq.createdAt + 5_000)
          return {
            rfq,
            status,
            quotes,
            trade: trade === "pending" ? pending : settledTrade(pending, filled, rfq.createdAt + 6_000)
          }
        })
      )
  })

/** The events one step of `view` may produce, at sequence `seq`. */
export const eventsArb: fc.Arbitrary<Array<EngineEvent>> = fc
  .tuple(viewArb, fc.integer({ min: 1, max: 1_000_000 }))
  .chain(([view, seq]) =>
    fc.array(
      fc.oneof(
        fc
          .constantFrom("created" as const, "updated" as const, "deleted" as const)
          .map((event): EngineEvent => ({ type: "rfq", event, seq, view })),
        fc
          .tuple(
            fc.constantFrom("created" as const, "updated" as const, "deleted" as const),
            quoteArb(view, 7)
          )
          .map(([event, quote]): EngineEvent => ({ type: "quote", event, seq, view, quote })),
        // A print of the public tape (issue 16).
        quoteArb(view, 7).map((quote): EngineEvent => ({ type: "trade", event: "created", seq, view, quote }))
      ),
      { minLength: 0, maxLength: 4 }
    )
  )

/** The value as JSON keeps it: keys whose value is `undefined` removed, at any depth. */
export const withoutUndefined = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutUndefined)
  if (typeof value !== "object" || value === null || BigDecimal.isBigDecimal(value)) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, withoutUndefined(v)])
  )
}
