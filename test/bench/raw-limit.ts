import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import type { CellResult } from './cell-result';
import { processNextDue } from './unit-of-work';

/**
 * The physical limit: `concurrency` dedicated connections, each looping over
 * the per-row unit of work (BEGIN; SELECT … FOR UPDATE SKIP LOCKED LIMIT 1 on
 * the due index; provider; UPDATE; INSERT outbox; COMMIT) until nothing is due
 * or the cap is reached. No lease, no fence, no framework.
 */
export async function runRawLimit(
  url: string,
  concurrency: number,
  capMs: number,
): Promise<CellResult> {
  const clients = Array.from({ length: concurrency }, () => new Client({ connectionString: url }));
  await Promise.all(clients.map((client) => client.connect()));
  try {
    let processed = 0;
    const started = performance.now();
    const deadline = started + capMs;
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < deadline) {
          if (!(await processNextDue(client))) return;
          processed++;
        }
      }),
    );
    return { processed, errors: 0, elapsedMs: performance.now() - started };
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}
