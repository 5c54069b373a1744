import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** A database created for one run (a test file, a benchmark, an EXPLAIN) and dropped after it. */
export interface ScratchDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/**
 * Creates an empty database with a random name on the server of `serverUrl`, so
 * runs never see each other's rows. The prefix must be a plain identifier: it
 * becomes part of an unquoted database name.
 */
export async function createScratchDatabase(
  serverUrl: string,
  prefix: string,
): Promise<ScratchDatabase> {
  if (!/^[a-z][a-z0-9_]*$/.test(prefix))
    throw new Error(`scratch database prefix must be a plain identifier, got ${prefix}`);
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withClient(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: async () => {
      await withClient(serverUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      );
    },
  };
}

/** One short-lived connection, closed whatever `work` does. */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
