/**
 * Assembly of the Sentry endpoints: part of the composition root. Their intake maps Sentry
 * envelopes to typed events for the collector's own intake, and client reports to the loss map.
 */
import type { Clock } from '../clock';
import type { Config } from '../config/load';
import type { AppBound } from '../intake/app-bound';
import type { IntakeService } from '../intake/intake-service';
import { RETRY_AFTER_MAX_S } from '../intake/retry-after';
import { createSentryMetrics } from '../metrics/sentry-instruments';
import type { Registry } from 'prom-client';
import { deterministicId } from '../otlp/event-id';
import { NO_APP } from '../loss-map/outcome';
import { countEvents } from '../loss-map/event-outcomes';
import type { OutcomeRecorder } from '../loss-map/outcome-recorder';
import { SentryIntake } from '../sentry/sentry-intake';
import type { AppDeps } from '../http/app';
import { eventLimits } from './storage';

/** The `sentry` part of the app's wiring. */
export function sentryFront(
  config: Config,
  ingest: Pick<IntakeService, 'ingestValidated'>,
  recorder: Pick<OutcomeRecorder, 'report' | 'count'> | null,
  apps: Pick<AppBound, 'admits'>,
  registry: Registry,
  clock: Clock,
): NonNullable<AppDeps['sentry']> {
  const metrics = createSentryMetrics(registry);
  const intake = new SentryIntake({
    ingest,
    limits: eventLimits(config),
    maxEventsPerCall: config.maxEventsPerRequest,
    retryAfterMaxSeconds: RETRY_AFTER_MAX_S,
    clock,
    metrics,
    ...(recorder !== null && {
      countLost: (subjects, reason) =>
        countEvents(
          (c) => recorder.count(c),
          subjects,
          (s) => s,
          'rejected',
          reason,
          'direct',
        ),
      // A Sentry client report has no id: one digested from its app and content, so a report is
      // counted once. Rows of apps the bound on distinct apps refuses count under app '', as
      // their events do.
      report: (counts, payload) => {
        if (counts.length === 0) return;
        const now = clock.now();
        recorder.report({
          id: deterministicId('sentry.client_report', counts[0]?.app ?? '', JSON.stringify(payload)),
          counts: counts.map((c) => (apps.admits(c.app, now) ? c : { ...c, app: NO_APP })),
        });
      },
    }),
  });
  return { intake, projects: config.sentryProjects ?? new Map(), metrics };
}
