/**
 * Where a row's statements run: a TypeORM EntityManager inside
 * `DataSource.transaction()`, or a bare pooled `pg` client inside
 * `runInPooledPgTransaction()`. Values always travel as `parameters`.
 */
export interface SqlExecutor {
  /** Resolves to the result rows (an empty array for a statement that returns none). */
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}
