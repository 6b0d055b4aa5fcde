/**
 * Indexes the read API's filters need where a filter would otherwise scan a whole table newest
 * first: `GET /v1/events?name=` and `?type=` on `events` (an absent or rare name or type read
 * every row), and `?app=` on `metric_samples` (the events table has its app index since 001).
 * Each is in the (filter, ts DESC, id DESC) order of the keyset page, so a page is an index range
 * read. Their write cost is measured by the bench's write-path rows (README, "Measured figures").
 * Built on the partitioned parents, so every partition (and each one created later) gets them;
 * the build holds a SHARE lock on the table, blocking writes while it runs on existing data.
 */
export const sql = `
CREATE INDEX events_name_ts_id ON events (name, ts DESC, id DESC);
CREATE INDEX events_type_ts_id ON events (type, ts DESC, id DESC);
CREATE INDEX metric_samples_app_ts_id ON metric_samples (app, ts DESC, id DESC);
`;
