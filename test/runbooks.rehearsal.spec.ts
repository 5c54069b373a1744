import type { DataSource } from 'typeorm';
import {
  NonRetriableDeliveryError,
  RetriableDeliveryError,
  type OperationsStatusReport,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import { insertChannel, insertNotification, minutesAgo } from './support/fixtures';
import { ops, type OpsRun } from './support/ops-cli';
import { statusCounts } from './support/operations-fixtures';
import { adaptersModule, createRetryTestApp, type RetryTestApp } from './support/retry-test-app';
import { readRunbook } from './support/runbook-commands';
import { ScriptedProviderAdapter } from './support/scripted-provider-adapter';
import { createTestDatabase, type TestDatabase } from './support/test-database';

/**
 * The runbooks of docs/runbooks/, followed step by step with exactly the
 * commands they print (their own variables filled in), against a worker that
 * runs beside the operator: the worker app is the running deployment, each ops
 * command is `npm run ops -- …` run in this process on the same database.
 */
describe('runbook rehearsals (real PostgreSQL)', () => {
  let db: TestDatabase;
  let worker: RetryTestApp;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  // A fresh worker per rehearsal: its circuit breakers are per process, like a deployment's.
  beforeEach(async () => {
    worker = await createRetryTestApp({
      url: db.url,
      options: {
        batchSize: 10,
        concurrency: 1,
        circuitBreaker: {
          volumeThreshold: 3,
          errorThresholdPercentage: 50,
          resetTimeoutMs: 600_000,
        },
      },
    });
    ds = worker.dataSource;
    await worker.reset();
  });

  afterEach(() => worker?.close());

  afterAll(() => db?.drop());

  /** The operator's shell: the app's environment, the deployment's adapter (one provider for both). */
  async function operator(argv: string[]): Promise<OpsRun> {
    return ops(
      argv,
      db.url,
      [adaptersModule([{ provide: ScriptedProviderAdapter, useValue: worker.provider }])],
      { RETRY_BATCH_SIZE: '10' },
    );
  }

  async function step(runbook: ReturnType<typeof readRunbook>, name: string): Promise<OpsRun[]> {
    const runs: OpsRun[] = [];
    for (const argv of runbook.argv(name)) {
      const run = await operator(argv);
      expect({ argv, code: run.code, stderr: run.stderr }).toEqual({ argv, code: 0, stderr: '' });
      runs.push(run);
    }
    return runs;
  }

  async function status(): Promise<OperationsStatusReport> {
    return (await operator(['status', '--json'])).json<OperationsStatusReport>();
  }

  async function insertDue(
    channel: string,
    count: number,
    address = (i: number) => `person-${i}@example.com`,
    attempts = 1,
  ): Promise<void> {
    const due = minutesAgo(worker.clock.now(), 5);
    for (let i = 0; i < count; i++) {
      await insertNotification(ds, {
        channel,
        status: 'Failed',
        attempts,
        nextAttemptAt: due,
        recipientAddress: address(i),
      });
    }
  }

  it('provider outage: circuit opens, backlog grows, pause, resume, drain, backlog back to zero', async () => {
    const runbook = readRunbook('provider-outage.md');
    expect(runbook.steps).toEqual(['diagnose', 'pause', 'resume', 'drain', 'verify']);
    const channel = runbook.argv('pause')[0]?.[2];
    await insertChannel(ds, { key: channel, maxAttempts: 10 });
    await insertDue(channel, 20);
    worker.provider.respondWith(() => {
      throw new RetriableDeliveryError('provider_unavailable');
    });

    // The outage: the breaker opens during the first cycle, the next one leaves the channel out.
    const first = completed(await worker.cycles.runCycle());
    expect(first.counts.retried).toBeGreaterThanOrEqual(3);
    const second = completed(await worker.cycles.runCycle());
    expect(second.excludedChannels).toEqual([
      { channel, reason: 'circuit-open', dueRows: expect.any(Number) },
    ]);
    await insertDue(channel, 15);
    expect((await status()).totals.backlog).toBe(35);

    const [diagnosis] = await step(runbook, 'diagnose');
    expect(diagnosis?.stdout).toMatch(new RegExp(`^${channel}\\s+35\\s`, 'm'));

    await step(runbook, 'pause');
    const callsBefore = worker.provider.calls.length;
    const paused = completed(await worker.cycles.runCycle());
    expect(paused.excludedChannels).toEqual([
      { channel, reason: 'paused', dueRows: expect.any(Number) },
    ]);
    expect(worker.provider.calls.length).toBe(callsBefore);
    expect((await status()).pausedChannels.map((p) => p.channel)).toEqual([channel]);

    // The provider is back.
    worker.provider.respondWith((message) => ({ providerMessageId: `ok-${message.id}` }));
    await step(runbook, 'resume');
    expect((await status()).pausedChannels).toEqual([]);

    // Drain: cycles in drain mode until the backlog is gone (batches of 10, 35 rows).
    for (let i = 0; i < 5 && (await status()).totals.backlog > 0; i++) {
      const [drain] = await step(runbook, 'drain');
      expect(drain?.stdout).toMatch(/completed/);
    }
    const [verify] = await step(runbook, 'verify');
    expect(verify?.stdout).toMatch(/\(total\)\s+0\s+0\s/);
    const after = await status();
    expect(after.totals).toMatchObject({ backlog: 0, due: 0 });
    expect(after.excludedChannels).toEqual([]);
    expect(await statusCounts(ds)).toEqual({ Sent: 35 });
  });

  it('terminal failures: stats, list, dry run, redrive, rows sent; address errors left alone', async () => {
    // The failures here are per row, not an outage: no breaker, every row gets its answer.
    await worker.close();
    worker = await createRetryTestApp({
      url: db.url,
      options: { batchSize: 10, concurrency: 1, circuitBreaker: { enabled: false } },
    });
    ds = worker.dataSource;
    const runbook = readRunbook('terminal-failures.md');
    expect(runbook.steps).toEqual(['stats', 'list', 'dry-run', 'redrive', 'verify']);
    const [, , , channel, , errorCode] = runbook.argv('list')[0];
    await insertChannel(ds, { key: channel, maxAttempts: 1 });
    await insertDue(channel, 6, undefined, 0);
    await insertDue(channel, 3, (i) => `bad-${i}@invalid`, 0);
    const isBad = (address: string) => address.startsWith('bad-');
    worker.provider.respondWith((message) => {
      if (isBad(message.recipientAddress)) throw new NonRetriableDeliveryError('invalid_address');
      throw new RetriableDeliveryError(errorCode);
    });
    expect(completed(await worker.cycles.runCycle()).counts.terminal).toBe(9);
    // The fix (a provider back, a template repaired): good addresses deliver, bad ones still fail.
    worker.provider.respondWith((message) => {
      if (isBad(message.recipientAddress)) throw new NonRetriableDeliveryError('invalid_address');
      return { providerMessageId: `ok-${message.id}` };
    });

    const [stats] = await step(runbook, 'stats');
    expect(stats?.stdout).toMatch(new RegExp(`^${channel}\\s+${errorCode}\\s+6\\s`, 'm'));
    expect(stats?.stdout).toMatch(new RegExp(`^${channel}\\s+invalid_address\\s+3\\s`, 'm'));

    const [list] = await step(runbook, 'list');
    expect(list?.stdout.match(/p\*\*\*@\*\*\*\.com/g)).toHaveLength(6);
    expect(list?.stdout).not.toMatch(/person-\d|bad-\d/);

    const before = await statusCounts(ds);
    const [dryRun] = await step(runbook, 'dry-run');
    expect(dryRun?.stdout).toMatch(/dry run: 6 row\(s\) would be redriven/);
    expect(await statusCounts(ds)).toEqual(before);

    const [redrive] = await step(runbook, 'redrive');
    expect(redrive?.stdout).toMatch(/redriven: 6 row\(s\) in 1 batch/);

    const [cycle, after] = await step(runbook, 'verify');
    expect(cycle?.stdout).toMatch(/sent 6/);
    expect(after?.stdout).not.toMatch(new RegExp(errorCode));
    expect(after?.stdout).toMatch(/invalid_address\s+3/);
    expect(await statusCounts(ds)).toEqual({ Sent: 6, terminal: 3 });
    const bad: Array<{ attempts: number; last_error_code: string }> = await ds.query(
      `SELECT attempts, last_error_code FROM notifications WHERE recipient_address LIKE 'bad-%'`,
    );
    expect(bad).toEqual(Array(3).fill({ attempts: 1, last_error_code: 'invalid_address' }));
  });
});
