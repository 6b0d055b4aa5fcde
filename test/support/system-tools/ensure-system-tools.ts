/**
 * Run by `npm test` before jest (the `pretest` script): makes sure the programs the tests run for
 * real are installed. As root with apt-get it installs the missing ones, saying so; otherwise it
 * stops at once with the command that installs each. Non-interactive, so CI (no stdin) can use it.
 */
import { spawnSync } from 'node:child_process';
import { findProgram, searchFolders } from '../../../src/dev-cluster/executables';
import { installInstructions, planSystemTools, type MachineAbilities } from './install-plan';
import { missingTools, REQUIRED_TOOLS, type SystemTool } from './required-tools';

/** Output of one apt-get step, kept for the error message when it fails. */
interface StepResult {
  readonly ok: boolean;
  readonly output: string;
}

/** Runs apt-get without a terminal, prompts or service restarts asking questions. */
function aptGet(args: readonly string[], env: NodeJS.ProcessEnv): StepResult {
  const r = spawnSync('apt-get', [...args], {
    env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return {
    ok: r.status === 0,
    output: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`,
  };
}

/** The last lines of a long output, for an error message. */
function tail(text: string, lines = 30): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Installs `packages` with apt-get (lists refreshed first: a new machine may have none). */
export function aptInstall(packages: readonly string[], env: NodeJS.ProcessEnv): StepResult {
  // Another apt run (a second npm test, unattended upgrades) holds the lock: wait for it.
  const lockWait = ['-o', 'DPkg::Lock::Timeout=300'];
  const update = aptGet([...lockWait, 'update', '-qq'], env);
  if (!update.ok) return update;
  // Without recommends: docker-compose alone would bring the whole Docker engine, prometheus its
  // node exporter, and chromium desktop helpers; none of them is used by the tests.
  return aptGet([...lockWait, 'install', '-y', '-qq', '--no-install-recommends', ...packages], env);
}

export interface EnsureOptions {
  readonly tools: readonly SystemTool[];
  readonly env: NodeJS.ProcessEnv;
  readonly abilities: MachineAbilities;
  readonly install: (packages: readonly string[], env: NodeJS.ProcessEnv) => StepResult;
  /** Where messages go (stderr). */
  readonly say: (text: string) => void;
  /** Milliseconds clock, for the time an install took. */
  readonly now: () => number;
}

/** Exit code for `npm test`'s pre-step: 0 when every tool is (now) installed, 1 otherwise. */
export function ensureSystemTools(o: EnsureOptions): number {
  const plan = planSystemTools(missingTools(o.tools, o.env.PATH), o.abilities);
  if (plan.kind === 'ready') return 0;
  if (plan.kind === 'stop') {
    o.say(plan.message);
    return 1;
  }
  o.say(plan.announcement);
  const started = o.now();
  const result = o.install(plan.packages, o.env);
  const still = missingTools(o.tools, o.env.PATH);
  if (!result.ok || still.length > 0) {
    o.say(
      `npm test: apt-get could not install ${plan.packages.join(', ')}:\n${tail(result.output)}\n\n` +
        installInstructions(still, o.abilities.isRoot, 'apt-get failed'),
    );
    return 1;
  }
  o.say(`npm test: installed ${plan.packages.join(', ')} in ${Math.round((o.now() - started) / 1000)} s`);
  return 0;
}

if (require.main === module) {
  process.exitCode = ensureSystemTools({
    tools: REQUIRED_TOOLS,
    env: process.env,
    abilities: {
      isRoot: process.getuid?.() === 0,
      hasAptGet: findProgram('apt-get', searchFolders(process.env.PATH)) !== null,
    },
    install: aptInstall,
    say: (text) => process.stderr.write(`${text}\n`),
    now: () => Date.now(),
  });
}
