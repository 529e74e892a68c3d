/**
 * Ids of RFQs, quotes, trades and allocations come from their identity sequences a block at a time:
 * with an increment of 100, one `nextval` reserves 100 ids for one engine (`IdBlocks.ts`), so
 * engines sharing a database never hand out the same id and a create stays one round trip in the
 * common case. Each sequence restarts past its table's largest id, so an existing database keeps
 * working. An insert that leaves the id to its default takes a block of its own: still unique.
 */
export const idBlocksSchema = `
ALTER TABLE rfqs ALTER COLUMN id SET INCREMENT BY 100;
SELECT setval(pg_get_serial_sequence('rfqs', 'id'), coalesce(max(id), 0) + 1, false) FROM rfqs;
ALTER TABLE quotes ALTER COLUMN id SET INCREMENT BY 100;
SELECT setval(pg_get_serial_sequence('quotes', 'id'), coalesce(max(id), 0) + 1, false) FROM quotes;
ALTER TABLE trades ALTER COLUMN id SET INCREMENT BY 100;
SELECT setval(pg_get_serial_sequence('trades', 'id'), coalesce(max(id), 0) + 1, false) FROM trades;
ALTER TABLE allocations ALTER COLUMN id SET INCREMENT BY 100;
SELECT setval(pg_get_serial_sequence('allocations', 'id'), coalesce(max(id), 0) + 1, false) FROM allocations;
`
