/**
 * The bound on distinct apps (`source.app`) a collector takes events from per minute of its clock
 * (`SLUICE_MAX_APPS_PER_MINUTE`): without keys, any client names any app, and each new name costs
 * storage a series, its rollups, a row in every list and work in every job. Apps admitted in the
 * minute before are always admitted again, so honest apps keep sending across the minute boundary
 * whatever a client that invents names does; a new app is admitted only while the apps of the two
 * minutes number fewer than the bound. So at most that many distinct apps are admitted in any minute,
 * and memory holds at most that many names. A refused app's events are rejected (`too_many_apps`),
 * one refused value each: apps already admitted are never refused for them.
 */
export class AppBound {
  /** The minute (`now` / 60 000, floored) `current` is of; -1 before the first call. */
  private minute = -1;
  /** Apps admitted this minute. */
  private current = new Set<string>();
  /** Apps admitted in the minute before. */
  private previous = new Set<string>();
  /** Members of `previous` admitted again this minute (so in `current` too). */
  private returned = 0;

  /** `maxPerMinute`: most distinct apps admitted in a minute; 0: no bound. */
  constructor(private readonly maxPerMinute: number) {}

  /** Whether events of `app` are admitted at `now` (epoch ms); a new app admitted is remembered. */
  admits(app: string, now: number): boolean {
    if (this.maxPerMinute === 0) return true;
    const minute = Math.floor(now / 60_000);
    if (minute !== this.minute) this.roll(minute);
    if (this.current.has(app)) return true;
    if (this.previous.has(app)) {
      this.current.add(app);
      this.returned++;
      return true;
    }
    // The apps of both minutes: a new one only while they leave room, so that every app of the
    // minute before can still come back.
    if (this.current.size + this.previous.size - this.returned >= this.maxPerMinute) return false;
    this.current.add(app);
    return true;
  }

  /** Distinct apps admitted in the minute of `now`. */
  admittedIn(now: number): number {
    const minute = Math.floor(now / 60_000);
    if (minute !== this.minute) this.roll(minute);
    return this.current.size;
  }

  private roll(minute: number): void {
    this.previous = minute === this.minute + 1 ? this.current : new Set();
    this.current = new Set();
    this.returned = 0;
    this.minute = minute;
  }
}
