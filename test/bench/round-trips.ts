import { Client } from 'pg';

/**
 * Counts statements sent to PostgreSQL by every `pg` client in this process
 * (TypeORM's pool included): `Client.prototype.query` is wrapped while a
 * counter is open, and only then: the throughput cells and the CPU profile
 * that follow must not pay for a wrapper. Each call is one round trip.
 */
export class QueryCounter {
  private static active: QueryCounter | null = null;
  private static original: ((...args: unknown[]) => unknown) | null = null;
  readonly statements: string[] = [];

  static start(): QueryCounter {
    QueryCounter.install();
    const counter = new QueryCounter();
    QueryCounter.active = counter;
    return counter;
  }

  get count(): number {
    return this.statements.length;
  }

  stop(): void {
    if (QueryCounter.active !== this) return;
    QueryCounter.active = null;
    if (QueryCounter.original) queryable().query = QueryCounter.original;
    QueryCounter.original = null;
  }

  private static install(): void {
    if (QueryCounter.original) return;
    const prototype = queryable();
    const original = prototype.query;
    QueryCounter.original = original;
    prototype.query = function (this: Client, ...args: unknown[]): unknown {
      QueryCounter.active?.statements.push(statementText(args[0]));
      return original.apply(this, args);
    };
  }
}

function queryable(): { query: (...args: unknown[]) => unknown } {
  return Client.prototype;
}

function statementText(query: unknown): string {
  const text =
    typeof query === 'string'
      ? query
      : typeof (query as { text?: unknown } | null)?.text === 'string'
        ? (query as { text: string }).text
        : '(query object)';
  return text.replace(/\s+/g, ' ').trim();
}

export interface RoundTrips {
  /** Statements of a cycle that finds nothing due. */
  readonly emptyCycle: number;
  /** Statements of a cycle that processes exactly one row. */
  readonly oneRowCycle: number;
  /** Statements of a cycle that processes exactly two rows: minus the one-row cycle, one row's cost. */
  readonly twoRowCycle: number;
  /** A peer's job body for one row: read, then BEGIN / UPDATE / INSERT outbox / COMMIT. */
  readonly peerJobPerRow: number;
  /** The write limit's statement for one row. */
  readonly writeLimitPerRow: number;
  /** What the one-row cycle sent, in order, for the report. */
  readonly oneRowStatements: readonly string[];
}
