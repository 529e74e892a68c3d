/**
 * A take-over publishes again the deletion of every RFQ of its shards deleted lately
 * (`engine/Recovery.ts`): a dead owner may have answered a delete and died before the step reached
 * the event stream. Those RFQs are found by their `deleted_at`, which only the delete step writes;
 * the index holds deleted RFQs only.
 */
export const recentlyDeletedSchema = `
CREATE INDEX rfqs_deleted_at_idx ON rfqs (deleted_at) WHERE deleted_at IS NOT NULL;
`
