import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Jest runs several test files at once (`maxWorkers` in jest.config.js). A file that measures
 * latency against a bound (a p99, a loop delay) must not share the cores with another file: it
 * calls `runAlone()`. A reader-writer lock between the workers of one checkout, made of files in
 * a directory: every test file holds the shared side while it runs (`holdShared`, from
 * test/support/run-alone-setup.ts); a file that runs alone takes the exclusive side, then waits
 * for the files beside it to end; files that start meanwhile wait for it to end. A holder whose
 * process is gone (a crashed worker) holds nothing.
 */

/** How long a file waits for its side of the lock (milliseconds): a slow file takes minutes. */
const WAIT_BOUND_MS = 15 * 60_000;
const POLL_MS = 100;

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const LOCK_DIR = path.join(
  os.tmpdir(),
  `sluice-test-lock-${createHash('sha256').update(REPO_ROOT).digest('hex').slice(0, 12)}`,
);
const EXCLUSIVE = path.join(LOCK_DIR, 'exclusive');

let sharedFile: string | null = null;

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid recorded in a lock file, or null when it is gone (or being written). */
function holder(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function removeIfStale(file: string): boolean {
  const pid = holder(file);
  if (pid === null || alive(pid)) return false;
  try {
    unlinkSync(file);
  } catch {
    // Removed by another worker meanwhile.
  }
  return true;
}

/** The exclusive side is held by a live process other than this one. */
function exclusiveHeldElsewhere(): boolean {
  const pid = holder(EXCLUSIVE);
  if (pid === null || pid === process.pid) return false;
  return !removeIfStale(EXCLUSIVE);
}

/** Shared holders other than this process, alive (or still writing their pid). */
function otherSharedHolders(): string[] {
  let names: string[];
  try {
    names = readdirSync(LOCK_DIR);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith('shared-') && !n.startsWith(`shared-${process.pid}-`))
    .map((n) => path.join(LOCK_DIR, n))
    .filter((f) => !removeIfStale(f));
}

async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_BOUND_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`waited ${WAIT_BOUND_MS} ms for ${what} (${LOCK_DIR})`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * Takes the shared side for this test file. Announced, then checked again: a file taking the
 * exclusive side between the two either sees this one (and waits) or is seen (and this one
 * withdraws and waits).
 */
export async function holdShared(): Promise<void> {
  mkdirSync(LOCK_DIR, { recursive: true });
  const mine = path.join(LOCK_DIR, `shared-${process.pid}-${randomUUID()}`);
  for (;;) {
    await until('a file running alone to end', () => !exclusiveHeldElsewhere());
    writeFileSync(mine, String(process.pid));
    if (!exclusiveHeldElsewhere()) break;
    unlinkSync(mine);
  }
  sharedFile = mine;
}

export function releaseShared(): void {
  if (sharedFile === null) return;
  try {
    unlinkSync(sharedFile);
  } catch {
    // Already gone.
  }
  sharedFile = null;
}

/** Registers the hooks that make the calling test file run with no other file beside it. */
export function runAlone(): void {
  let held = false;
  beforeAll(async () => {
    // This file's own shared side first: two files running alone would otherwise wait on each other.
    releaseShared();
    mkdirSync(LOCK_DIR, { recursive: true });
    await until('the lock to run alone', () => {
      try {
        writeFileSync(EXCLUSIVE, String(process.pid), { flag: 'wx' });
        return true;
      } catch {
        removeIfStale(EXCLUSIVE);
        return false;
      }
    });
    held = true;
    await until('the files running beside this one to end', () => otherSharedHolders().length === 0);
  }, WAIT_BOUND_MS + 10_000);
  afterAll(() => {
    if (!held) return;
    try {
      unlinkSync(EXCLUSIVE);
    } catch {
      // Already gone.
    }
  });
}
