/** Formatting for people: times in the browser's zone (ISO in UTC on hover), numbers grouped. */

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** `2026-12-02 13:04:05.123` in the browser's zone. */
export function localTime(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`
  );
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** `3 s ago`, `5 min ago`, `2 h ago`, `4 d ago`. */
export function ago(ms: number, now: number = Date.now()): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export function num(n: number | null | undefined, digits = 1): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  return n.toLocaleString('en-US', { maximumFractionDigits: digits });
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = -1;
  do {
    v /= 1024;
    u++;
  } while (v >= 1024 && u < units.length - 1);
  return `${v.toFixed(1)} ${units[u]}`;
}

/** A `datetime-local` input value (browser zone) as epoch ms, or undefined when empty or invalid. */
export function fromLocalInput(value: string): number | undefined {
  if (value === '') return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}

/** Epoch ms as a `datetime-local` input value in the browser's zone. */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/**
 * Labels of a time axis's ticks (epoch ms, in the browser's zone), for the step between them
 * (`incrMs`) and the span shown (`spanMs`): `14:30:15` for steps under a minute, `12-06` for steps
 * of a day or more, else `14:30`, with the date (`12-06 00:00`) on each day's first tick when the
 * span is a day or more.
 */
export function timeTickLabels(ticksMs: readonly number[], incrMs: number, spanMs: number): string[] {
  let day = '';
  return ticksMs.map((ms) => {
    const d = new Date(ms);
    const date = `${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
    const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
    if (incrMs >= DAY_MS) return date;
    if (incrMs < MINUTE_MS) return `${time}:${pad(d.getSeconds())}`;
    if (spanMs < DAY_MS) return time;
    const first = date !== day;
    day = date;
    return first ? `${date} ${time}` : time;
  });
}
