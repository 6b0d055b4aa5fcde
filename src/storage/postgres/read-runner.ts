import type { ReadRunner } from '../layout/read-runner';
import { positionalParams } from './positional-params';
import type { ReadQuery } from './read-pool';

/** Runs shared read SQL on the read pool, with positional parameters. */
export function pgReadRunner(read: ReadQuery): ReadRunner {
  return {
    async rows<Row>(build: (param: (v: unknown) => string) => string): Promise<Row[]> {
      const { values, param } = positionalParams();
      const text = build(param);
      return (await read<Record<string, unknown>>(text, values)).rows as Row[];
    },
  };
}
