/**
 * Indexes the read API's filters need where a filter would otherwise scan the whole `events`
 * table newest first: `GET /v1/events?name=` and `?type=` (an absent or rare name or type read
 * every row). Each is in the (filter, ts DESC, id DESC) order of the keyset page, so a page is an
 * index range read. `metric_samples` gets none: it takes most of the write volume, and its
 * filters are served already (`name` since 001; an `app` alone is bounded by the read pool's
 * statement timeout instead). Write cost: the bench's write-path rows. Built on the partitioned
 * parent, so every partition (and each one created later) gets them; the build holds a SHARE lock
 * on `events`, blocking its writes while it runs over existing rows.
 */
export const sql = `
CREATE INDEX events_name_ts_id ON events (name, ts DESC, id DESC);
CREATE INDEX events_type_ts_id ON events (type, ts DESC, id DESC);
`;
