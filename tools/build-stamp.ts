/**
 * Whether a build step's output is up to date: a stamp file written after the step succeeded holds
 * a hash of its inputs (contents and names) and of what else decides its output (tool versions),
 * and the list of inputs it read. The step is skipped while the inputs hash the same and its
 * outputs exist: content, not mtimes, so a checkout or a copy that touches every file still skips.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

interface Stamp {
  /** Input files, relative to the root. */
  readonly inputs: readonly string[];
  readonly fingerprint: string;
}

/** sha256 of each input's name and bytes (a missing input hashes as missing), and of `extra`. */
export function fingerprintOf(root: string, inputs: readonly string[], extra: readonly string[]): string {
  const hash = createHash('sha256');
  for (const file of [...inputs].sort()) {
    hash.update(`${file}\0`);
    const full = path.join(root, file);
    hash.update(existsSync(full) ? readFileSync(full) : '\0missing\0');
  }
  for (const e of extra) hash.update(`\0${e}`);
  return hash.digest('hex');
}

/** The stamp's inputs when they still hash to its fingerprint and every output exists; else null. */
export function upToDate(
  root: string,
  stampFile: string,
  extra: readonly string[],
  outputs: readonly string[],
): readonly string[] | null {
  if (!existsSync(stampFile) || !outputs.every((o) => existsSync(o))) return null;
  let stamp: Stamp;
  try {
    stamp = JSON.parse(readFileSync(stampFile, 'utf8')) as Stamp;
  } catch {
    return null;
  }
  return fingerprintOf(root, stamp.inputs, extra) === stamp.fingerprint ? stamp.inputs : null;
}

/** Records what a successful build read. */
export function writeStamp(
  root: string,
  stampFile: string,
  inputs: readonly string[],
  extra: readonly string[],
): void {
  const stamp: Stamp = { inputs: [...inputs].sort(), fingerprint: fingerprintOf(root, inputs, extra) };
  writeFileSync(stampFile, `${JSON.stringify(stamp)}\n`);
}
