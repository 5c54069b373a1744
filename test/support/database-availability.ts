import { Client } from 'pg';
import { testServerUrl } from './test-server';

/**
 * Makes one test database unreachable and reachable again, the way an outage
 * looks to the app: new connections are refused and the open ones are cut.
 * Works from the server's `postgres` database, so the target has no session of ours.
 */
export class DatabaseAvailability {
  constructor(private readonly databaseName: string) {
    if (!/^[a-z_][a-z0-9_]*$/.test(databaseName)) {
      throw new Error(`unexpected database name ${databaseName}`);
    }
  }

  async cutOff(): Promise<void> {
    await this.admin(async (client) => {
      await client.query(`ALTER DATABASE ${this.databaseName} WITH ALLOW_CONNECTIONS false`);
      await client.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [this.databaseName],
      );
    });
  }

  async restore(): Promise<void> {
    await this.admin((client) =>
      client.query(`ALTER DATABASE ${this.databaseName} WITH ALLOW_CONNECTIONS true`),
    );
  }

  /** Sessions currently open on the database. */
  async sessions(): Promise<number> {
    return this.admin(async (client) => {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1`,
        [this.databaseName],
      );
      return rows[0].n;
    });
  }

  private async admin<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const url = new URL(testServerUrl());
    url.pathname = '/postgres';
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }
}
