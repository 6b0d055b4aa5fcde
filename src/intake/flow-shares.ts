import { maxMinLevel } from './fair-share';

/** How far back a flow's rate is remembered (milliseconds): the time constant of its weighted rate. */
export const FLOW_TAU_MS = 1000;
/**
 * The share of the bytes let through lately that the flows are held to while the process sheds (a
 * factor): below 1, so that shedding always refuses some requests, from the flows above the level.
 */
export const SHED_SHARE = 0.9;
/** Flows remembered at most; a request of a flow past them counts in the flow of requests that name none. */
export const MAX_FLOWS = 1000;
/** How often the fair level is worked out again (milliseconds). */
const LEVEL_EVERY_MS = 100;
/** A flow offering fewer bytes a second than this is idle: its entry can be forgotten. */
const IDLE_PER_SECOND = 1;

interface Rate {
  weight: number;
  at: number;
}

/**
 * Who sends most, before any body is read: each request belongs to a flow (its app, known from its
 * ingest key or its `X-Sluice-App` header; '' when it names none) and costs its body's bytes (its
 * `Content-Length`), the measure of the work it asks for. While the process sheds, a request is
 * refused only when its flow offers more bytes a second than the max-min fair level
 * (`maxMinLevel`) of `SHED_SHARE` of the bytes let through lately, among every flow's offered
 * rate: a flow that sends little is never refused for one that floods, as flow-queueing
 * schedulers do (fq_codel). With one flow, or flows that all send alike, every request may be
 * refused, as without flows.
 */
export class FlowShares {
  private readonly offered = new Map<string, Rate>();
  private readonly passed: Rate = { weight: 0, at: 0 };
  private level = { value: Infinity, at: -Infinity };
  private sweptAt = -Infinity;

  /**
   * The flow a request of `flow` counts in: itself, or '' past `MAX_FLOWS`. A full table is swept
   * at most once per `FLOW_TAU_MS`: a client naming a new flow per request must not make every
   * request walk the table.
   */
  flowOf(flow: string, now: number): string {
    if (this.offered.has(flow) || flow === '') return flow;
    if (this.offered.size >= MAX_FLOWS && now - this.sweptAt >= FLOW_TAU_MS) this.sweep(now);
    return this.offered.size >= MAX_FLOWS ? '' : flow;
  }

  /** A request of `flow` (`flowOf`'s answer) arrived, of `bytes`. */
  arrived(flow: string, bytes: number, now: number): void {
    let rate = this.offered.get(flow);
    if (rate === undefined) {
      rate = { weight: 0, at: now };
      this.offered.set(flow, rate);
    }
    add(rate, bytes, now);
  }

  /** A request of `bytes` was let through to be read. */
  letThrough(bytes: number, now: number): void {
    add(this.passed, bytes, now);
  }

  /** Whether, while the process sheds, a request of `flow` is refused: its flow is over the fair level. */
  overShare(flow: string, now: number): boolean {
    const level = this.fairLevel(now);
    const rate = this.offered.get(flow);
    return level === Infinity || (rate !== undefined && perSecond(rate, now) > level);
  }

  private fairLevel(now: number): number {
    if (now - this.level.at < LEVEL_EVERY_MS && now >= this.level.at) return this.level.value;
    const rates = [...this.offered.values()].map((r) => perSecond(r, now));
    this.level = { value: maxMinLevel(SHED_SHARE * perSecond(this.passed, now), rates), at: now };
    return this.level.value;
  }

  private sweep(now: number): void {
    this.sweptAt = now;
    for (const [flow, rate] of this.offered)
      if (perSecond(rate, now) < IDLE_PER_SECOND) this.offered.delete(flow);
  }
}

/** `amount` more in `rate`, decayed to `now`. */
function add(rate: Rate, amount: number, now: number): void {
  decay(rate, now);
  rate.weight += amount;
}

function decay(rate: Rate, now: number): void {
  if (now <= rate.at) return;
  rate.weight *= Math.exp(-(now - rate.at) / FLOW_TAU_MS);
  rate.at = now;
}

/** What `rate` counts, per second, at `now`. */
function perSecond(rate: Rate, now: number): number {
  decay(rate, now);
  return (rate.weight * 1000) / FLOW_TAU_MS;
}
