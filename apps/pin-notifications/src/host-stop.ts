import { performance } from 'node:perf_hooks';
import type { INestApplication } from '@nestjs/common';
import { RetryCycleService, type RetryWorkerStopReport } from '@pin/notifications-retry';
import type pino from 'pino';
import type { AppDatabase } from './database/app-database';

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * The host's stop on SIGTERM or SIGINT, in place of Nest's shutdown hooks
 * (`enableShutdownHooks`), which end the process as soon as the app is
 * closed: the embedded database must stop after that, and the stop is summed
 * up in one line. In order: the app closes (the worker stops claiming and
 * drains its calls, the lease is released, HTTP closes, the pool closes), then
 * the embedded database stops, then `app-stopped` says what was drained and
 * how long it took, then the process exits (0, or 1 when a hook failed).
 *
 * A signal while stopping is ignored: Ctrl-C under `npm start` arrives up to
 * three times (the terminal signals the whole foreground group, then npm and
 * the nest CLI each forward theirs).
 */
export function stopHostOnSignals(
  app: INestApplication,
  database: AppDatabase,
  log: pino.Logger,
): void {
  const worker = retryWorkerOf(app);
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    void stopHost(app, database, worker, log, signal).then((code) => process.exit(code));
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
}

async function stopHost(
  app: INestApplication,
  database: AppDatabase,
  worker: RetryCycleService | null,
  log: pino.Logger,
  signal: NodeJS.Signals,
): Promise<number> {
  const started = performance.now();
  let failure: unknown = null;
  try {
    await app.close();
  } catch (error) {
    failure = error;
  }
  // Whatever a hook did: the server this process started is not left behind.
  const databaseStop = await database.stop();
  const drained = worker?.lastStop ?? null;
  const line = {
    msg: 'app-stopped',
    event: 'app-stopped',
    signal,
    ...workerFields(drained),
    database: databaseStop,
    durationMs: Math.round(performance.now() - started),
  };
  if (failure === null) {
    log.info(line);
    return 0;
  }
  log.error({
    ...line,
    // Name and message only: a driver error's other fields may hold query parameters.
    error: failure instanceof Error ? `${failure.name}: ${failure.message}` : typeof failure,
  });
  return 1;
}

function workerFields(drained: RetryWorkerStopReport | null): Record<string, unknown> {
  // No report: the graph has no retry worker.
  if (!drained) return {};
  return {
    cycleInFlight: drained.cycleInFlight,
    callsDrained: drained.callsInFlight - drained.callsCut,
    callsCut: drained.callsCut,
    rowsWritten: drained.rowsWritten,
    claimsHandedBack: drained.claimsHandedBack,
    lease: drained.lease,
    workerDrainMs: drained.durationMs,
  };
}

function retryWorkerOf(app: INestApplication): RetryCycleService | null {
  try {
    return app.get(RetryCycleService, { strict: false });
  } catch {
    return null;
  }
}
