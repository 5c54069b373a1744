import type { DataSource } from 'typeorm';
import { pgPoolDriver } from './pg-pool-driver';

/** What one connection of the pool says about what is in front of PostgreSQL. */
export interface ConnectionPoolerProbe {
  /** True when the connection's backend key is not the server process answering it. */
  readonly pooled: boolean;
  /** The process id of the BackendKeyData the connection was given at login (null: none). */
  readonly connectionProcessId: number | null;
  /** `pg_backend_pid()`: the server process that ran the probe. */
  readonly backendPid: number;
}

/**
 * Asks one pooled connection whether it talks to PostgreSQL itself. At login
 * PostgreSQL sends the client its backend key (process id and cancel secret),
 * and on a direct connection that process id is the `pg_backend_pid()` of
 * every statement. A pooler that hands server connections from client to
 * client cannot give the client the key of a server process it may not get
 * again, so it sends one of its own (PgBouncer: random). A plain TCP proxy
 * (a port forward, a cloud SQL proxy) passes the server's key through and
 * reads as direct. The connection goes back to the pool afterwards.
 */
export async function detectConnectionPooler(
  dataSource: DataSource,
): Promise<ConnectionPoolerProbe> {
  const [client] = await pgPoolDriver(dataSource).obtainMasterConnection();
  let failure: Error | undefined;
  try {
    const result = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const backendPid = Number(result.rows[0]?.pid);
    // Not in pg's typings, but set by pg's Client from BackendKeyData at login.
    const processId = (client as { processID?: unknown }).processID;
    const connectionProcessId = typeof processId === 'number' ? processId : null;
    return { pooled: connectionProcessId !== backendPid, connectionProcessId, backendPid };
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    client.release(failure);
  }
}
