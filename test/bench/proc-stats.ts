import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** CPU time and memory of one process, read from /proc (Linux only). */
export interface ProcSample {
  /** User + system CPU time since the process started (seconds). */
  readonly cpuSeconds: number;
  /** Resident set size now (bytes). */
  readonly rssBytes: number;
  /** Peak resident set size since the process started, `VmHWM` (bytes). */
  readonly peakRssBytes: number;
}

let ticksPerSecond: number | null = null;

/** `getconf CLK_TCK`: the unit of utime/stime in /proc/<pid>/stat; 100 on every Linux we run on. */
function clockTicks(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

function statusKiB(status: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return m ? Number(m[1]) : 0;
}

/** Reads the process's CPU time and RSS; throws when the process is gone. */
export function sampleProcess(pid: number): ProcSample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: split after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    cpuSeconds: ticks / clockTicks(),
    rssBytes: statusKiB(status, 'VmRSS') * 1024,
    peakRssBytes: statusKiB(status, 'VmHWM') * 1024,
  };
}

export const MiB = 1024 * 1024;
