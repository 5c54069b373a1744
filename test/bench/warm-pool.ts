import type { Pool, PoolClient } from 'pg';

/**
 * Opens `connections` connections of a pool before a cell is timed: opening a
 * connection (SCRAM authentication included) costs milliseconds of CPU on both
 * sides, which would otherwise land in whichever system's cell opens the most.
 */
export async function warmPool(pool: Pool, connections: number): Promise<void> {
  const clients: PoolClient[] = [];
  try {
    for (let i = 0; i < connections; i++) clients.push(await pool.connect());
  } finally {
    for (const client of clients) client.release();
  }
}
