import type { OwnershipService } from "@rfq/engine"

/**
 * What a REST answer tells the balancer in front of several hosts, so that the next request about
 * the same RFQ goes straight to its owner instead of being forwarded there (`deploy/haproxy.cfg`
 * learns these headers into its stick tables; docs/deploy.md, "Routing to the owner").
 *
 * - `X-Owns-Rfq: <rfqId>`: the host that answered owns this RFQ (holds its shard) right now.
 * - `X-Owns-Quote: <rfqQuoteId>`: the same host owns this quote's RFQ.
 *
 * Sent only by a host among several (ownership shared), and only when it owns the RFQ at the
 * moment it answers: a host that forwarded the call says nothing, so the balancer never learns a
 * wrong owner from it. A hint that goes stale (the RFQ's shard moved) costs one forward, never a
 * wrong answer: every host still answers every request. The values are ids the caller already
 * knew or was just given; no host's name or address is in them, and HAProxy removes both headers
 * before the answer reaches the client.
 */
export const OWNS_RFQ_HEADER = "x-owns-rfq"
export const OWNS_QUOTE_HEADER = "x-owns-quote"

/** A positive safe integer from a JSON number; else undefined. */
const idOf = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined

/** The same from a path parameter's text: plain digits only. */
const pathIdOf = (value: unknown): number | undefined =>
  typeof value === "string" && /^[1-9][0-9]{0,14}$/.test(value) ? idOf(Number(value)) : undefined

const field = (record: unknown, name: string): unknown =>
  typeof record === "object" && record !== null && !Array.isArray(record)
    ? (record as Record<string, unknown>)[name]
    : undefined

/** The headers for an answer (`answer`) to a call whose raw input was `input`; undefined when none. */
export type OwnerHints = (input: unknown, answer: unknown) => Readonly<Record<string, string>> | undefined

/**
 * The hints of one host: the RFQ is the answer's `rfqId`, else the input's `rfqId`, else the path's
 * `{id}`; the quote is the answer's or else the input's `rfqQuoteId`. Undefined for one host alone
 * (nothing to route between) or when no RFQ it owns is named.
 */
export const ownerHints = (ownership: OwnershipService): OwnerHints | undefined =>
  ownership.shared
    ? (input, answer) => {
        const rfqId =
          idOf(field(answer, "rfqId")) ?? idOf(field(input, "rfqId")) ?? pathIdOf(field(input, "id"))
        if (rfqId === undefined || !ownership.owns(rfqId)) return undefined
        const quoteId = idOf(field(answer, "rfqQuoteId")) ?? idOf(field(input, "rfqQuoteId"))
        return quoteId === undefined
          ? { [OWNS_RFQ_HEADER]: String(rfqId) }
          : { [OWNS_RFQ_HEADER]: String(rfqId), [OWNS_QUOTE_HEADER]: String(quoteId) }
      }
    : undefined
