import type { SystemTool } from './required-tools';

/** What this machine allows `npm test` to do about missing tools. */
export interface MachineAbilities {
  /** The process runs as root (uid 0). */
  readonly isRoot: boolean;
  /** `apt-get` is installed (a Debian-like system). */
  readonly hasAptGet: boolean;
}

/** What `npm test` does before jest starts. */
export type SystemToolsPlan =
  | { readonly kind: 'ready' }
  /** Root with apt: install the packages, saying so, then check again. */
  | { readonly kind: 'install'; readonly packages: readonly string[]; readonly announcement: string }
  /** Cannot install: stop at once with the command for each missing tool. */
  | { readonly kind: 'stop'; readonly message: string };

/** The command that installs `pkg` on a Debian-like system, for the user to run. */
export function installCommand(pkg: string, isRoot: boolean): string {
  return `${isRoot ? '' : 'sudo '}apt-get install -y ${pkg}`;
}

/** Decides between running jest, installing with apt-get, and stopping with instructions. */
export function planSystemTools(missing: readonly SystemTool[], m: MachineAbilities): SystemToolsPlan {
  if (missing.length === 0) return { kind: 'ready' };
  const packages = [...new Set(missing.map((t) => t.debianPackage))];
  if (m.isRoot && m.hasAptGet) {
    return {
      kind: 'install',
      packages,
      announcement:
        `npm test: installing ${packages.join(', ')} with apt-get (tests run them for real: ` +
        `${missing.map((t) => `${t.name} for the ${t.neededBy}`).join('; ')})`,
    };
  }
  const why = m.hasAptGet
    ? 'npm test installs them itself only when run as root'
    : 'apt-get is not available here: install these Debian packages with your system’s package manager';
  return { kind: 'stop', message: installInstructions(missing, m.isRoot, why) };
}

/** `missing` with the command that installs each, headed by `why` they were not installed. */
export function installInstructions(missing: readonly SystemTool[], isRoot: boolean, why: string): string {
  const packages = [...new Set(missing.map((t) => t.debianPackage))];
  const width = Math.max(...missing.map((t) => t.name.length));
  const commandWidth = Math.max(...missing.map((t) => installCommand(t.debianPackage, isRoot).length));
  const lines = [
    `npm test: ${missing.length} system tool${missing.length === 1 ? '' : 's'} missing (${why}). Install:`,
    ...missing.map(
      (t) =>
        `  ${t.name.padEnd(width)}  ${installCommand(t.debianPackage, isRoot).padEnd(commandWidth)}  # ${t.neededBy}`,
    ),
    '',
    `All at once: ${isRoot ? '' : 'sudo '}apt-get update && ${installCommand(packages.join(' '), isRoot)}`,
    'Then run npm test again. (npm run test:unit needs none of them.)',
  ];
  return lines.join('\n');
}
