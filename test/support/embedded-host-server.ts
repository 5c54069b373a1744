import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import type { ChildHost } from './child-host';

/** The embedded PostgreSQL a host started (no DATABASE_URL), as the host's log and the server say. */
export interface EmbeddedHostServer {
  readonly url: string;
  /** The postmaster, from its data directory's postmaster.pid. */
  readonly pid: number;
  readonly dataDirectory: string;
}

/**
 * Finds the server from the host's `embedded-database-started` line (its
 * credentials are src/database/embedded-postgres.ts' fixed ones). The session
 * opened here is closed before this returns.
 */
export async function embeddedServerOf(host: ChildHost): Promise<EmbeddedHostServer> {
  const [started] = host.events('embedded-database-started');
  if (!started) throw new Error('the host logged no embedded-database-started line');
  const url = `postgres://postgres:postgres@127.0.0.1:${started.port as number}/postgres`;
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ data_directory: string }>('SHOW data_directory');
    const dataDirectory = rows[0].data_directory;
    const pid = Number(readFileSync(join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return { url, pid, dataDirectory };
  } finally {
    await client.end();
  }
}
