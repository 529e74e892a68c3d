import { describe, expect, it } from "vitest"
import { OWNS_QUOTE_HEADER, OWNS_RFQ_HEADER, ownerHints } from "../src/OwnerHints.js"

/** A host among several that owns the RFQs in `owned`. */
const hostOwning = (...owned: Array<number>) =>
  ownerHints({ shared: true, owns: (id) => owned.includes(id) })!

describe("owner hints (X-Owns-Rfq, X-Owns-Quote)", () => {
  it("one host alone gives none: there is nothing to route between", () => {
    expect(ownerHints({ shared: false, owns: () => true })).toBeUndefined()
  })

  it("names the RFQ and quote the answering host owns, from the answer, the body or the path", () => {
    const hints = hostOwning(7)
    // The create's answer.
    expect(hints({ id: "0" }, { rfqId: 7, status: "open" })).toEqual({ [OWNS_RFQ_HEADER]: "7" })
    // A quote's create: the RFQ from the body, the quote from the answer.
    expect(hints({ rfqId: 7, amount: 1 }, { rfqQuoteId: 31 })).toEqual({
      [OWNS_RFQ_HEADER]: "7",
      [OWNS_QUOTE_HEADER]: "31"
    })
    // A read by path parameter.
    expect(hints({ id: "7" }, { rfqId: 7 })).toEqual({ [OWNS_RFQ_HEADER]: "7" })
    expect(hints({ id: "7" }, [{ rfqQuoteId: 3 }])).toEqual({ [OWNS_RFQ_HEADER]: "7" })
  })

  it("says nothing about an RFQ another host owns (this host forwarded the call)", () => {
    const hints = hostOwning(7)
    expect(hints({ rfqId: 8 }, { rfqQuoteId: 31 })).toBeUndefined()
    expect(hints({ id: "8" }, { rfqId: 8 })).toBeUndefined()
    // A quote named alone (the accept): its RFQ is not in the call, so nothing is claimed.
    expect(hints({ rfqQuoteId: 31 }, { direction: "buy" })).toBeUndefined()
  })

  it("takes only plain positive integers, whatever the client sent", () => {
    const hints = hostOwning(7, 12, 1000)
    for (const id of ["12abc", "1e3", "-7", "07", " 7", "7 ", "", "99999999999999999999", "0x7"]) {
      expect(hints({ id }, null), JSON.stringify(id)).toBeUndefined()
    }
    for (const rfqId of [7.5, -7, 0, Number.MAX_SAFE_INTEGER + 1, "7", null, true, [7], { rfqId: 7 }]) {
      expect(hints({ rfqId }, {}), JSON.stringify(rfqId)).toBeUndefined()
    }
    expect(hints({ rfqId: 7 }, { rfqQuoteId: "31" })).toEqual({ [OWNS_RFQ_HEADER]: "7" })
    expect(hints(null, "text")).toBeUndefined()
  })
})
