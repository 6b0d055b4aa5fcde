import type { Param } from '../layout/sql-param';

/** Parameters named in the order they are added (`@p1`, `@p2`, …), so one SQL text binds the same way every time. */
export function namedParams(): { params: Record<string, unknown>; param: Param } {
  const params: Record<string, unknown> = {};
  let n = 0;
  return {
    params,
    param: (value) => {
      const name = `p${++n}`;
      params[name] = value;
      return `@${name}`;
    },
  };
}
