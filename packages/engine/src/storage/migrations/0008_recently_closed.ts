/**
 * A take-over publishes again the last step of every RFQ of its shards that closed lately
 * (`engine/Recovery.ts`): a dead owner may have answered a fill, cancel or expiry and died before
 * the step reached the event stream. Those RFQs are found by their `closed_at`, which only a
 * closing step writes; the index holds closed RFQs only.
 */
export const recentlyClosedSchema = `
CREATE INDEX rfqs_closed_at_idx ON rfqs (closed_at) WHERE closed_at IS NOT NULL AND deleted_at IS NULL;
`
