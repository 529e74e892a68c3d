/**
 * Issue 16, items 2 and 3.
 *
 * - `quotes.valid_until`: the quote's `validUntil` (unix ms), null when it has none. The RFQ's
 *   rules keep it after creation and at most the RFQ's `expires_at`; the column only refuses what
 *   no rule could write.
 * - The public block-trade tape reads printed trades (filled, or partly filled) newest first by
 *   `(created_at, id)`, the keyset of its cursor: a partial index over exactly those rows.
 */
export const quoteExpiryAndTapeSchema = `
ALTER TABLE quotes ADD COLUMN valid_until bigint CHECK (valid_until IS NULL OR valid_until > 0);
CREATE INDEX trades_tape_idx ON trades (created_at DESC, id DESC) WHERE status IN ('filled', 'filledPartial');
`
