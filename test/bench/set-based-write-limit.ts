import { Client } from 'pg';
import type { BenchSystem, PreparedCell } from './bench-system';
import { fakeProvider } from './fake-provider';
import { writeSentBatch } from './set-based-write';

/** Rows per statement: as many as ours' group commit writes at most in one. */
export const SET_BATCH = 100;

/**
 * The set-based write limit: `budget` dedicated `pg` connections, each taking
 * the next SET_BATCH due rows from one shared list (oldest due first), calling
 * the provider (0 ms) for all of them at once and then writing them, Sent with
 * their outbox events, in one autocommitted statement. No claim, no lease, no
 * framework: what the per-row write limit is for one row per commit, this is
 * for a hundred, the ceiling of a system that writes its outcomes in groups
 * (ours' ideal at 0 ms). The provider's returns time the cell like everyone
 * else's.
 */
export class SetBasedWriteLimit implements BenchSystem {
  readonly name = 'set-write-limit' as const;
  readonly callsInFlight: number;
  readonly connections: number;
  readonly description: string;

  constructor(
    private readonly url: string,
    budget: number,
  ) {
    this.callsInFlight = budget * SET_BATCH;
    this.connections = budget;
    this.description = `${budget} \`pg\` clients, each calling the provider for the next ${SET_BATCH} due rows at once and then writing them in one autocommit statement (\`WITH picked AS (… FOR UPDATE SKIP LOCKED), updated AS (UPDATE … FROM picked RETURNING …) INSERT INTO notification_outbox … SELECT … FROM updated\`): one round trip and one commit per ${SET_BATCH} rows, no claim`;
  }

  async prepare(): Promise<PreparedCell> {
    const clients = Array.from(
      { length: this.connections },
      () => new Client({ connectionString: this.url }),
    );
    await Promise.all(clients.map((client) => client.connect()));
    const { rows } = await clients[0].query<{ id: string }>(
      `SELECT id FROM notifications WHERE due_at <= now() ORDER BY due_at`,
    );
    const due = rows.map((row) => row.id);
    let next = 0;
    let stopping = false;
    let loops: Promise<void[]> | null = null;
    return {
      start: () => {
        loops = Promise.all(
          clients.map(async (client) => {
            while (!stopping && next < due.length) {
              const ids = due.slice(next, next + SET_BATCH);
              next += ids.length;
              const providerMessageIds = await Promise.all(ids.map((id) => fakeProvider.send(id)));
              const written = await writeSentBatch(client, ids, providerMessageIds);
              if (written !== ids.length) {
                throw new Error(
                  `${ids.length - written} of ${ids.length} notifications not written`,
                );
              }
            }
          }),
        );
        // A failure is reported by stop(); until then it must not be an unhandled rejection.
        loops.catch(() => undefined);
        return Promise.resolve();
      },
      stop: async () => {
        stopping = true;
        try {
          await loops;
        } finally {
          await Promise.all(clients.map((client) => client.end()));
        }
        return { ranDry: next >= due.length };
      },
    };
  }

  enqueueJobs(): Promise<void> {
    return Promise.resolve();
  }

  restoreJobs(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  notes(): string[] {
    return [];
  }
}
