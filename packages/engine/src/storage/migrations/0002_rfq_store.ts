/**
 * What the RFQ store needs beyond the initial schema:
 * - `rfqs.split`: the RFQ was created with settlementAccounts, so its trade reports allocations;
 * - `rfq_legs.expiry` and `rfq_legs.contracts`: the venue contract each leg settles in, per
 *   settlement option (`{"DBT": {"instrumentId", "venueName", "quoteCurrency"}, …}`). The hedge's
 *   contracts and expiry live inside `rfqs.hedge`;
 * - an index over the live RFQs (open, or caught mid-settlement), which a restart loads in full.
 */
export const rfqStoreSchema = `
ALTER TABLE rfqs ADD COLUMN split boolean NOT NULL DEFAULT false;
ALTER TABLE rfq_legs ADD COLUMN expiry text;
ALTER TABLE rfq_legs ADD COLUMN contracts jsonb NOT NULL DEFAULT '{}'::jsonb;
CREATE INDEX rfqs_live_idx ON rfqs (id) WHERE status IN ('open', 'trading') AND deleted_at IS NULL;
`
