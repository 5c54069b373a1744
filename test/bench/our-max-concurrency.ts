import { NotificationsRetryError } from '../../libs/notifications-retry/src';
import { startOurCycleApp } from './our-cycle';

/** Where the search upward stops if the library accepts every concurrency (it bounds the option itself). */
const SEARCH_CEILING = 100_000;

/**
 * The most calls in flight the library's start-up checks accept on a pool of
 * `poolSize`: found by starting the module as the host would, with the option
 * value under test, and seeing whether it starts. Today's checks want a pool
 * larger than `concurrency` (InsufficientPoolSizeError) and a concurrency the
 * option's bounds allow; whatever they become, this asks them rather than
 * restating them. Assumes that a concurrency accepted is accepted for every
 * smaller one.
 */
export async function ourMaxConcurrency(
  url: string,
  poolSize: number,
  batchSize: number,
): Promise<number> {
  const accepts = async (concurrency: number): Promise<boolean> => {
    try {
      const app = await startOurCycleApp({ url, poolSize, concurrency, batchSize, drain: true });
      await app.close();
      return true;
    } catch (error) {
      if (error instanceof NotificationsRetryError) return false;
      throw error;
    }
  };
  let accepted = 0;
  let rejected = SEARCH_CEILING + 1;
  // Start at the pool size, then gallop up or bisect down.
  let probe = poolSize;
  while (rejected - accepted > 1) {
    if (await accepts(probe)) accepted = probe;
    else rejected = probe;
    probe =
      rejected > SEARCH_CEILING
        ? Math.min(SEARCH_CEILING, probe * 2)
        : Math.floor((accepted + rejected) / 2);
    if (accepted === SEARCH_CEILING) break;
  }
  if (accepted === 0) {
    throw new Error(`the library accepts no concurrency on a pool of ${poolSize}`);
  }
  return accepted;
}
