/**
 * Issue 15: a step's guard is its event-log row. Event `seq` of an RFQ is written only onto event
 * `seq - 1` (`RfqStepWriter.insertEvent`; `rfq_events_rfq_seq_key` settles two writers racing for
 * one `seq`), so `rfqs.version`, which counted the same events on the RFQ's row, is no longer
 * written: a step that only stores or closes quotes leaves the RFQ's row alone. The column goes
 * rather than stay behind with a count nobody keeps.
 */
export const stepGuardOnEventsSchema = `
ALTER TABLE rfqs DROP COLUMN version;
`
