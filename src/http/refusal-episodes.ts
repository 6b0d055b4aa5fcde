import type { Clock } from '../clock';
import type { Logger } from '../log/logger';

/** One route's run of refusals: from its first 503 to its next answer that is not one. */
interface Episode {
  readonly startedAt: number;
  refused: number;
  readonly byCode: Map<string, number>;
}

export interface RefusalEpisodesOptions {
  readonly logger: Logger;
  readonly clock: Clock;
}

/**
 * The log of expected refusals. A 503 with a catalogue code (storage or queue unavailable,
 * storage busy) is a state of the collector, not news per request: an outage at 300 requests a
 * second wrote 1.4 MB of identical error lines in 20 s. Per route (method and path), the first
 * refusal logs one warning with its code; the route's next answer that is not a refusal logs
 * one line with what was refused in between, by code, and for how long. Each refused request
 * still counts in `sluice_http_request_duration_seconds{status="503"}` and its capability's
 * counter, and logs at debug. An episode still open at shutdown is logged then.
 */
export class RefusalEpisodes {
  private readonly open = new Map<string, Episode>();

  constructor(private readonly o: RefusalEpisodesOptions) {}

  /** `method route` answered 503 with catalogue `code`. */
  refused(method: string, path: string, code: string): void {
    const route = `${method} ${path}`;
    const episode = this.open.get(route);
    if (episode !== undefined) {
      episode.refused++;
      episode.byCode.set(code, (episode.byCode.get(code) ?? 0) + 1);
      return;
    }
    this.open.set(route, { startedAt: this.o.clock.now(), refused: 1, byCode: new Map([[code, 1]]) });
    this.o.logger.warn({ route, code }, 'requests refused');
  }

  /** `method route` answered with anything but a refusal. Costs a size check while nothing is refused. */
  served(method: string, path: string): void {
    if (this.open.size === 0) return;
    const key = `${method} ${path}`;
    const episode = this.open.get(key);
    if (episode === undefined) return;
    this.open.delete(key);
    this.end(key, episode, 'requests served again');
  }

  /** Logs the episodes still open (shutdown). Idempotent. */
  close(): void {
    for (const [route, episode] of this.open) this.end(route, episode, 'requests still refused at shutdown');
    this.open.clear();
  }

  private end(route: string, episode: Episode, msg: string): void {
    this.o.logger.info(
      {
        route,
        refused: episode.refused,
        byCode: Object.fromEntries(episode.byCode),
        durationMs: this.o.clock.now() - episode.startedAt,
      },
      msg,
    );
  }
}
