import type { BenchSystem, PreparedCell } from './bench-system';
import { drainWithCycles, startOurCycleApp } from './our-cycle';

/** The specification's batch: what one claim takes. */
export const BATCH_SIZE = 200;

/**
 * Ours as a host runs it: one TypeORM pool of the whole budget,
 * `NotificationsRetryModule` in drain mode (batch 200) with as many calls in
 * flight as the peers keep (`--ours-concurrency`), schedule off and cycles run
 * back to back. Calls hold no connection: the pool serves the claims and the
 * group-committed outcome writes.
 */
export class OursSystem implements BenchSystem {
  readonly name = 'ours' as const;
  readonly connections: number;
  readonly description: string;

  constructor(
    private readonly url: string,
    budget: number,
    readonly callsInFlight: number,
    mostAccepted: number,
  ) {
    this.connections = budget;
    this.description = `\`NotificationsRetryModule\` (drain, batch ${BATCH_SIZE}, concurrency ${callsInFlight}: the peers' calls in flight; its start-up checks accept up to ${mostAccepted} on a pool of ${budget}) in a Nest app context with one TypeORM pool of ${budget}; cycles back to back; log lines counted, not written`;
  }

  async prepare(): Promise<PreparedCell> {
    const app = await startOurCycleApp({
      url: this.url,
      poolSize: this.connections,
      concurrency: this.callsInFlight,
      batchSize: BATCH_SIZE,
      drain: true,
    });
    const controller = new AbortController();
    let running: ReturnType<typeof drainWithCycles> | null = null;
    return {
      start: () => {
        running = drainWithCycles(app, controller.signal);
        // A failure is reported by stop(); until then it must not be an unhandled rejection.
        running.catch(() => undefined);
        return Promise.resolve();
      },
      stop: async () => {
        controller.abort();
        try {
          const result = await running;
          return { ranDry: result?.ranDry ?? false };
        } finally {
          await app.close();
        }
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
