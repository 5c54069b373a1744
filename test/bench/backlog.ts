import type { Client } from 'pg';
import { checkpoint, countDue, loadDueRows, vacuum } from './bench-database';
import type { BenchSystem } from './bench-system';
import { progress } from './progress';

/**
 * The due rows every throughput cell starts from, and the queue jobs the peers
 * keep for them. It only grows (throughput.ts sizes it to the cell before each
 * round): new rows are due after every row already loaded, so a larger backlog
 * is the smaller one with more behind it.
 */
export class Backlog {
  constructor(
    private readonly admin: Client,
    private rows: number,
    private readonly systems: readonly BenchSystem[],
    private readonly vacuumTables: readonly string[],
  ) {}

  get size(): number {
    return this.rows;
  }

  async growTo(rows: number): Promise<void> {
    if (rows <= this.rows) return;
    const added = rows - this.rows;
    progress(`backlog: ${this.rows} → ${rows} due rows`);
    // As text: a JS Date would cut the microseconds and take the last old row for a new one.
    const [{ last }] = (
      await this.admin.query<{ last: string }>(
        `SELECT max(due_at)::text AS last FROM notifications`,
      )
    ).rows;
    await loadDueRows(this.admin, added);
    const ids = (
      await this.admin.query<{ id: string }>(
        `SELECT id FROM notifications WHERE due_at > $1::timestamptz ORDER BY due_at`,
        [last],
      )
    ).rows.map((row) => row.id);
    if (ids.length !== added) {
      throw new Error(
        `backlog: loaded ${ids.length} rows after the last due one, expected ${added}`,
      );
    }
    for (const system of this.systems) await system.enqueueJobs(ids);
    await vacuum(this.admin, this.vacuumTables);
    await checkpoint(this.admin);
    this.rows = rows;
    const due = await countDue(this.admin);
    if (due !== rows) throw new Error(`backlog: ${due} rows due after growing to ${rows}`);
  }
}
