import type { RfqState } from "./RfqRecord.js"

/**
 * The one expiry rule: an RFQ is past expiry from the millisecond its `expiresAt` is reached
 * (`expiresAt = createdAt + RFQ_TTL_SECONDS`). The machine's `EXPIRE` guard, the quote and accept
 * rules, the actor registry and the reads all ask this predicate.
 */
export const isPastExpiry = (state: RfqState, now: number): boolean => now >= state.rfq.expiresAt
