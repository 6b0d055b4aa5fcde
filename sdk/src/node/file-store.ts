import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseSavedEvents, type BufferStore, type WireEvent } from '../index';

/**
 * A `BufferStore` in one JSON file (Node). Each save writes a temporary file
 * and renames it over `path`, so a crash mid-write leaves the previous
 * snapshot intact. Saves are serialised; when several are asked for while one
 * runs, only the newest snapshot is written next. The folder is created.
 */
export function fileStore(path: string): BufferStore {
  let writing: Promise<void> | undefined;
  let next: readonly WireEvent[] | undefined;
  // Report saves in order, one at a time (they share a temporary file).
  let reportWrite: Promise<void> = Promise.resolve();

  const write = async (events: readonly WireEvent[]): Promise<void> => {
    const tmp = `${path}.${process.pid}.tmp`;
    await mkdir(dirname(path), { recursive: true });
    await writeFile(tmp, JSON.stringify(events));
    await rename(tmp, path);
  };

  const drain = async (): Promise<void> => {
    while (next !== undefined) {
      const events = next;
      next = undefined;
      await write(events);
    }
  };

  return {
    async load() {
      try {
        return parseSavedEvents(JSON.parse(await readFile(path, 'utf8')));
      } catch {
        return []; // no file yet, or a corrupt one: start empty
      }
    },
    save(events) {
      next = events;
      writing ??= drain().finally(() => (writing = undefined));
      return writing;
    },
    // The client report beside the events (`<path>.report`), written the same way.
    saveReport(state) {
      const target = `${path}.report`;
      const tmp = `${target}.${process.pid}.tmp`;
      const text = JSON.stringify(state);
      reportWrite = reportWrite.then(async () => {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(tmp, text);
        await rename(tmp, target);
      });
      return reportWrite;
    },
    async loadReport() {
      try {
        return JSON.parse(await readFile(`${path}.report`, 'utf8')) as unknown;
      } catch {
        return null;
      }
    },
  };
}
