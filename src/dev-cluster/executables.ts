import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** A program the cluster runner (or its tests) needs is not installed. */
export class MissingProgramError extends Error {
  override readonly name = 'MissingProgramError';
}

/**
 * Folders searched for a program: those of `PATH`, then the sbin folders Debian installs daemons
 * such as haproxy into (often missing from a non-root PATH).
 */
export function searchFolders(envPath: string | undefined): string[] {
  const fromPath = (envPath ?? '').split(path.delimiter).filter(Boolean);
  return [...new Set([...fromPath, '/usr/local/sbin', '/usr/sbin', '/sbin'])];
}

/** Full path of the executable `name` in `folders`, or null. */
export function findProgram(name: string, folders: readonly string[]): string | null {
  for (const folder of folders) {
    const candidate = path.join(folder, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** Like `findProgram`, but a missing program throws with the Debian package that installs it. */
export function requireProgram(name: string, debianPackage: string, folders: readonly string[]): string {
  const found = findProgram(name, folders);
  if (found === null) {
    throw new MissingProgramError(
      `${name} is not installed (looked in ${folders.join(', ')}). Install it with: apt-get install -y ${debianPackage}`,
    );
  }
  return found;
}
