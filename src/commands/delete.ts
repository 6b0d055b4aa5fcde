/** `sluice delete`: an app's data removed from storage, after a confirmation. */
import { createInterface } from 'node:readline';
import type { AppDataDeletion, Storage } from '../storage/port';
import type { DeleteArgs } from './delete-args';

export interface DeleteIo {
  /** Where the data is, for the question (`SQLite ./data/sluice.db`, `PostgreSQL`). */
  readonly where: string;
  /** Where the answer to the question is read (a terminal, or a pipe in scripts). */
  readonly input: NodeJS.ReadableStream;
  /** The question and notes (stderr). */
  say(text: string): void;
  /** The outcome (stdout). */
  print(text: string): void;
}

function describe(d: AppDataDeletion): string {
  if (d.scope === 'id') return `the event ${d.id} of app "${d.app}"`;
  const what = `every event, metric sample, rollup and loss-map row of app "${d.app}"`;
  return d.scope === 'before' ? `${what} older than ${new Date(d.before).toISOString()}` : what;
}

/** The first line of `input`, or null when it ends first. */
function firstLine(input: NodeJS.ReadableStream): Promise<string | null> {
  return new Promise((resolve) => {
    const lines = createInterface({ input, terminal: false });
    let answered = false;
    lines.once('line', (line) => {
      answered = true;
      lines.close();
      resolve(line.trim());
    });
    lines.once('close', () => {
      if (!answered) resolve(null);
    });
  });
}

/** Exit code: 0 deleted, 1 not confirmed (nothing deleted). */
export async function runDelete(a: DeleteArgs, storage: Storage, io: DeleteIo): Promise<number> {
  const deletion: AppDataDeletion =
    a.id !== null
      ? { app: a.app, scope: 'id', id: a.id }
      : a.before !== null
        ? { app: a.app, scope: 'before', before: a.before }
        : { app: a.app, scope: 'all' };
  if (!a.yes) {
    io.say(
      `Delete ${describe(deletion)} from ${io.where}? This cannot be undone.\nType the app's name to confirm: `,
    );
    const answer = await firstLine(io.input);
    if (answer !== a.app) {
      io.say(`\nnot confirmed (${answer === null ? 'no answer' : `"${answer}"`}): nothing deleted\n`);
      return 1;
    }
  }
  const d = await storage.deleteAppData(deletion);
  io.print(
    `deleted ${d.events} events, ${d.metricSamples} metric samples, ${d.rollups1m} 1m and ${d.rollups1h} 1h rollup rows and ${d.lossMapRows} loss-map rows of app "${a.app}"\n`,
  );
  if (deletion.scope === 'id' && d.events > 0) {
    io.print('the loss map still counts it as stored (its counts are per minute, not per event)\n');
  }
  if (deletion.scope !== 'all' && d.rollups1m + d.rollups1h > 0) {
    io.print('rollup buckets that keep other data are recomputed by the next downsample run\n');
  }
  return 0;
}
