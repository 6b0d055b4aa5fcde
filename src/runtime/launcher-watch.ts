/**
 * A process started by npm (`npm start`, `npx sluice`) runs under npm's shell: npm → `sh -c` →
 * node. npm forwards SIGTERM and SIGINT to that shell only, and a shell that is not running its
 * command with `exec` dies of it without passing it on: the collector would be left running,
 * undrained, holding its port, its parent gone. So when npm launched this process, losing the
 * process that launched it is taken as the SIGTERM it was meant to get. Only under npm: a process
 * started with `nohup … &` or by a supervisor outlives its shell on purpose.
 */
import { RELAUNCHED_ENV } from './relaunch';

/** How often the parent process id is compared (milliseconds). */
const CHECK_MS = 250;

/**
 * When npm launched this process (it sets `npm_command` in its scripts' environment), sends this
 * process SIGTERM once its parent process has gone (it was reparented), so the handler in place
 * drains it. Not in a relaunched child: its parent is the relaunching process (src/runtime/relaunch.ts).
 */
export function drainWhenLauncherExits(env: NodeJS.ProcessEnv): void {
  if (env.npm_command === undefined || env[RELAUNCHED_ENV] === '1') return;
  const launcher = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, CHECK_MS);
  timer.unref();
}
