/** The filters every read query shares; times are epoch ms, `from` inclusive, `to` exclusive. */
export interface CommonFilters {
  readonly app?: string;
  readonly name?: string;
  readonly from?: number;
  readonly to?: number;
}

/** WHERE conditions and named parameters for `filters`, on the table's time column `timeColumn`. */
export function whereFilters(
  filters: CommonFilters,
  timeColumn: string,
  params: Record<string, unknown>,
): string[] {
  const where: string[] = [];
  const add = (clause: string, key: string, value: unknown): void => {
    where.push(clause);
    params[key] = value;
  };
  if (filters.app !== undefined) add('app = @app', 'app', filters.app);
  if (filters.name !== undefined) add('name = @name', 'name', filters.name);
  if (filters.from !== undefined) add(`${timeColumn} >= @from`, 'from', filters.from);
  if (filters.to !== undefined) add(`${timeColumn} < @to`, 'to', filters.to);
  return where;
}
