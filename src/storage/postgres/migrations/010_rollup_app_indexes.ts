/**
 * Indexes that let the lists of the read API (`GET /v1/apps`, `GET /v1/metrics/names?app=`) page
 * through apps and an app's metrics by index probes, at any number of apps: the rollups' keys lead
 * with the name, so finding an app's rows read every series of the window (with 100,000 apps, the
 * lists answered 503 after the 5 s read timeout). On the 1h rollups, `(app, bucket)` (is an app in
 * a window, its samples) and `(app, name, bucket)` (an app's metrics, name by name); on the 1m
 * rollups, `(app, bucket)` (an app's newest minute). Write cost: the downsample job's upserts of
 * those rows maintain them. The build holds a SHARE lock on each table while it runs over existing
 * rows (the downsample job waits).
 */
export const sql = `
CREATE INDEX metric_rollups_1h_app_bucket ON metric_rollups_1h (app, bucket);
CREATE INDEX metric_rollups_1h_app_name_bucket ON metric_rollups_1h (app, name, bucket);
CREATE INDEX metric_rollups_1m_app_bucket ON metric_rollups_1m (app, bucket);
`;
