import type { PageSink, ReadRunner } from '../layout/read-runner';
import { positionalParams } from './positional-params';
import type { ReadPages } from './read-cursor';
import type { ReadQuery } from './read-pool';

/** Runs shared read SQL on the read pool, with positional parameters; paged reads on a cursor. */
export function pgReadRunner(read: ReadQuery, readPages: ReadPages): ReadRunner {
  return {
    async rows<Row>(build: (param: (v: unknown) => string) => string): Promise<Row[]> {
      const { values, param } = positionalParams();
      const text = build(param);
      return (await read<Record<string, unknown>>(text, values)).rows as Row[];
    },
    async pages<Row>(
      build: (param: (v: unknown) => string) => string,
      pageRows: number,
      onPage: PageSink<Row>,
    ): Promise<void> {
      const { values, param } = positionalParams();
      const text = build(param);
      await readPages<Record<string, unknown>>(text, values, pageRows, (rows) => onPage(rows as Row[]));
    },
  };
}
