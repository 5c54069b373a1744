/**
 * Where a row's statements run: a TypeORM EntityManager inside
 * `DataSource.transaction()`, or a bare pooled `pg` client inside
 * `runInPooledPgTransaction()`. Values always travel as `parameters`.
 */
export interface SqlExecutor {
  /**
   * Resolves to the result rows of a SELECT (or of a data-modifying statement
   * wrapped in a WITH … SELECT). Not to be relied on for a bare UPDATE/DELETE:
   * an EntityManager answers those with `[rows, rowCount]`, a pg client with rows.
   */
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}
