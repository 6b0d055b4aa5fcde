/** What one app sent through this collector: events taken and events throttled, since start. */
export interface AppTally {
  accepted: number;
  /** Accepted error events (they never pass the rate limiter). */
  errors: number;
  throttled: number;
  /** The sampling tick of the last change (see `tick`). */
  lastTick: number;
}

/** Apps tracked at once; the events of apps beyond it are tallied under `OTHER_APPS`. */
export const MAX_TRACKED_APPS = 1000;
/** The tally of apps that found no room (a flood of app names cannot grow the map). */
export const OTHER_APPS = '(other apps)';

/**
 * Per-app counts of intake decisions in this process, for the pipeline view's busiest apps
 * (metrics labels never carry app names). Bounded: at most `maxApps` apps; apps idle for a while
 * are forgotten by `forgetIdle`. One map update per app per request (per event for errors).
 */
export class AppActivity {
  private readonly tallies = new Map<string, AppTally>();
  private currentTick = 0;

  constructor(private readonly maxApps = MAX_TRACKED_APPS) {}

  record(app: string, accepted: number, throttled: number, errors = 0): void {
    let tally = this.tallies.get(app);
    if (tally === undefined) {
      const key = this.tallies.size < this.maxApps ? app : OTHER_APPS;
      tally = this.tallies.get(key);
      if (tally === undefined) {
        tally = { accepted: 0, errors: 0, throttled: 0, lastTick: this.currentTick };
        this.tallies.set(key, tally);
      }
    }
    tally.accepted += accepted;
    tally.errors += errors;
    tally.throttled += throttled;
    tally.lastTick = this.currentTick;
  }

  /** Advances the sampling tick (the sampler calls it once per sample). */
  tick(): number {
    return ++this.currentTick;
  }

  /** The cumulative tallies (live objects: copy what must be kept). */
  get all(): ReadonlyMap<string, Readonly<AppTally>> {
    return this.tallies;
  }

  /** Forgets apps with no decision in the last `ticks` ticks (their rates are zero). */
  forgetIdle(ticks: number): void {
    for (const [app, t] of this.tallies) if (this.currentTick - t.lastTick > ticks) this.tallies.delete(app);
  }
}
