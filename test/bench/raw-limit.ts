import { Client } from 'pg';
import type { BenchSystem, PreparedCell } from './bench-system';
import { fakeProvider } from './fake-provider';
import { writeSent } from './unit-of-work';

/**
 * The per-row write limit: `budget` dedicated `pg` connections writing rows by
 * id, oldest due first from one shared list (no claim, no lease, no framework),
 * one statement per row in autocommit: the row Sent and its outbox event, one
 * round trip and one commit. Every system here writes each row in a
 * transaction of its own and does more besides (claims, fetches, reads), so
 * this is the most rows per second any of them can write on this machine and
 * budget; the ideal of every cell is capped by it. The provider is called at
 * 0 ms before each write, so its returns time the cell like everyone else's.
 */
export class RawWriteLimit implements BenchSystem {
  readonly name = 'write-limit' as const;
  readonly callsInFlight: number;
  readonly connections: number;
  readonly description: string;

  constructor(
    private readonly url: string,
    budget: number,
  ) {
    this.callsInFlight = budget;
    this.connections = budget;
    this.description = `${budget} \`pg\` clients writing due rows by id, one autocommit statement per row (\`WITH updated AS (UPDATE … RETURNING) INSERT INTO notification_outbox …\`): one round trip and one commit per row, no claim`;
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
              const id = due[next++];
              const providerMessageId = await fakeProvider.send(id);
              if (!(await writeSent(client, id, providerMessageId))) {
                throw new Error(`notification ${id} was not written`);
              }
            }
          }),
        );
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
