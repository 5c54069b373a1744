import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import {
  RetryCycleService,
  type OperationsStatusReport,
  type RedriveResult,
} from '@pin/notifications-retry';
import { AppModule } from '../apps/pin-notifications/src/app.module';
import {
  parseAppConfig,
  type RetryWorkerOptions,
} from '../apps/pin-notifications/src/config/app-config';
import { demoProviderOutage } from '../apps/pin-notifications/src/demo/demo-provider-outage';
import { createRootLogger } from '../apps/pin-notifications/src/logging/root-logger';
import { completed } from './support/cycle-reports';
import { ops, type OpsRun } from './support/ops-cli';
import { statusCounts } from './support/operations-fixtures';
import { readRunbook, type RunbookCommands } from './support/runbook-commands';
import { createTestDatabase, type TestDatabase } from './support/test-database';

/**
 * The runbooks of docs/runbooks/, followed step by step with exactly the
 * commands they print (their own variables filled in), on the demo app: the
 * running deployment is AppModule with the demo on (its catalog, its seeded
 * rows, its flaky e-mail provider, the push stub), as `npm start` runs it; each
 * ops command is `npm run ops -- …` run in this process on the same database,
 * with the environment the runbooks tell the operator to set for the demo.
 * The worker's schedule is off so that the test says when a cycle runs.
 */
describe('runbook rehearsals on the demo app (real PostgreSQL)', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let ds: DataSource;
  let cycles: RetryCycleService;

  async function startDemoApp(retry: Partial<RetryWorkerOptions> = {}): Promise<void> {
    db = await createTestDatabase();
    const config = parseAppConfig({ DATABASE_URL: db.url, RETRY_WORKER_ENABLED: 'false' });
    app = await NestFactory.createApplicationContext(
      AppModule.forRoot({
        databaseUrl: db.url,
        // What bootstrapHost decides for the embedded database of `npm start`.
        demo: true,
        retryWorker: { ...config.retryWorker, ...retry },
        logger: createRootLogger('warn', { write: () => undefined }),
      }),
      { logger: false, abortOnError: false },
    );
    ds = app.get(DataSource);
    cycles = app.get(RetryCycleService);
  }

  afterEach(async () => {
    demoProviderOutage.end();
    await app?.close();
    await db?.drop();
  });

  /** The operator's shell, set up as the runbooks say for the demo app. */
  const operator = (argv: string[]): Promise<OpsRun> =>
    ops(argv, db.url, [], { SEED_DEMO_DATA: 'true' });

  async function step(runbook: RunbookCommands, name: string): Promise<OpsRun[]> {
    const runs: OpsRun[] = [];
    for (const argv of runbook.argv(name)) {
      const run = await operator(argv);
      expect({ argv, code: run.code, errors: errorLines(run.stderr) }).toEqual({
        argv,
        code: 0,
        errors: [],
      });
      runs.push(run);
      // SHOW_REHEARSAL=1 prints what each command printed, to refresh the runbooks' sample outputs.
      if (process.env.SHOW_REHEARSAL) process.stdout.write(`\n$ ${argv.join(' ')}\n${run.stdout}`);
    }
    return runs;
  }

  const status = async (): Promise<OperationsStatusReport> =>
    (await operator(['status', '--json'])).json<OperationsStatusReport>();

  const channelOf = (report: OperationsStatusReport, channel: string) =>
    report.channels.find((c) => c.channel === channel);

  const emailAttempts = async (): Promise<number> =>
    Number(
      (
        await ds.query<Array<{ sum: string }>>(
          `SELECT sum(attempts) FROM notifications WHERE channel = 'email'`,
        )
      )[0].sum,
    );

  it('provider outage: circuit opens, backlog waits, pause, resume, drain, nothing due; a hung lease cut off', async () => {
    await startDemoApp();
    const runbook = readRunbook('provider-outage.md');
    expect(runbook.steps).toEqual(['diagnose', 'pause', 'resume', 'drain', 'lease', 'verify']);
    expect(runbook.unrehearsed()).toEqual([]);
    const channel = runbook.variable('CHANNEL');
    expect(channel).toBe('email');

    // The outage: the demo's e-mail provider answers 503; its breaker opens during the first
    // cycle, the next one leaves the channel out while the other channels flow.
    demoProviderOutage.begin();
    const first = completed(await cycles.runCycle());
    expect(first.counts.retried).toBeGreaterThanOrEqual(5);
    // A quarter of an hour into the outage: the retried rows are due again, the circuit stays open.
    await minutesPass(ds, 15);
    const second = completed(await cycles.runCycle());
    expect(second.excludedChannels).toEqual(
      expect.arrayContaining([{ channel, reason: 'circuit-open', dueRows: expect.any(Number) }]),
    );

    const [diagnosis] = await step(runbook, 'diagnose');
    expectSample(runbook, 'diagnose', diagnosis);
    const outage = channelOf(await status(), channel);
    expect(outage?.due).toBeGreaterThan(0);
    expect(diagnosis?.stdout).toMatch(
      new RegExp(`^${channel}\\s+${outage?.backlog}\\s+${outage?.due}\\s`, 'm'),
    );

    await step(runbook, 'pause');
    const attemptsBefore = await emailAttempts();
    const paused = completed(await cycles.runCycle());
    expect(paused.excludedChannels).toEqual(
      expect.arrayContaining([{ channel, reason: 'paused', dueRows: outage?.due }]),
    );
    expect(await emailAttempts()).toBe(attemptsBefore);
    expect((await status()).pausedChannels.map((p) => p.channel)).toEqual([channel]);

    // The provider is back.
    demoProviderOutage.end();
    await step(runbook, 'resume');
    expect((await status()).pausedChannels).toEqual([]);

    const dueBefore = channelOf(await status(), channel)?.due ?? 0;
    const [drain] = await step(runbook, 'drain');
    expectSample(runbook, 'drain', drain);
    expect(drain?.stdout).toMatch(new RegExp(`processed ${dueBefore}: sent \\d+, retried \\d+`));
    expect(await emailAttempts()).toBe(attemptsBefore + dueBefore);

    const [verify] = await step(runbook, 'verify');
    expectSample(runbook, 'verify', verify);
    const after = await status();
    expect(after.totals.due).toBe(channelOf(after, 'sms')?.due);
    expect(after.excludedChannels).toEqual([{ channel: 'sms', reason: 'disabled' }]);
    expect(verify?.stdout).toMatch(new RegExp(`^${channel}\\s+\\d+\\s+0\\s`, 'm'));
    expect(verify?.stdout).toMatch(/left out of the claim: sms \(disabled\)$/m);

    // A hung owner, as the Lease section describes it: live, at the fencing token status shows.
    await ds.query(
      `UPDATE distributed_locks SET owner = 'pod-7:1:a1b2c3', fencing_token = 42,
              expires_at = now() + interval '5 minutes'`,
    );
    const [release] = await step(runbook, 'lease');
    expect(release?.stdout).toMatch(
      /released the live lease notifications:retry-worker of pod-7:1:a1b2c3/,
    );
    expect((await status()).lease).toMatchObject({ owner: 'pod-7:1:a1b2c3', live: false });
  });

  it('terminal failures: stats, list, dry run, redrive, rows attempted again; address errors left alone', async () => {
    // Hours of outage pass in a few cycles here, faster than the breaker's real-time reset: without
    // it every due row gets its answer in each cycle, as it would from half-open probes over hours.
    await startDemoApp({ circuitBreaker: { enabled: false } });
    const runbook = readRunbook('terminal-failures.md');
    expect(runbook.steps).toEqual(['stats', 'list', 'dry-run', 'redrive', 'verify']);
    expect(runbook.unrehearsed()).toEqual([]);
    const channel = runbook.variable('CHANNEL');
    const errorCode = runbook.variable('ERROR_CODE');
    expect([channel, errorCode]).toEqual(['email', 'provider_unavailable']);

    // A long outage: hour after hour the e-mail rows fail until their attempts run out.
    demoProviderOutage.begin();
    const start = (await ds.query<Array<{ now: Date }>>(`SELECT now()`))[0].now;
    for (let hour = 0; hour < 6; hour++) {
      await app.get(RetryCycleService).runCycle({
        now: new Date(start.getTime() + hour * 3_600_000),
      });
    }
    demoProviderOutage.end();
    const outageTerminal = await terminalCount(ds, channel, errorCode);
    expect(outageTerminal).toBeGreaterThan(10);

    const [stats] = await step(runbook, 'stats');
    expectSample(runbook, 'stats', stats);
    expect(stats?.stdout).toMatch(
      new RegExp(`^${channel}\\s+${errorCode}\\s+${outageTerminal}\\s`, 'm'),
    );
    expect(stats?.stdout).toMatch(new RegExp(`^${channel}\\s+recipient_rejected\\s+1\\s`, 'm'));

    const [list] = await step(runbook, 'list');
    expect(runbook.sampleOutput('list')).toMatch(
      /^[0-9a-f-]{36} {2}email {4}u\*\*\*@\*\*\*\.com {2}4 +provider_unavailable /m,
    );
    expect(list?.stdout.match(/u\*\*\*@\*\*\*\.com/g)).toHaveLength(outageTerminal);
    expect(list?.stdout).not.toMatch(/user\d+@example/);

    const before = await statusCounts(ds);
    const [dryRun] = await step(runbook, 'dry-run');
    expectSample(runbook, 'dry-run', dryRun);
    expect(dryRun?.stdout).toMatch(
      new RegExp(`dry run: ${outageTerminal} row\\(s\\) would be redriven`),
    );
    expect(await statusCounts(ds)).toEqual(before);

    const [redrive] = await step(runbook, 'redrive');
    expectSample(runbook, 'redrive', redrive);
    expect(redrive?.stdout).toMatch(
      new RegExp(`redriven: ${outageTerminal} row\\(s\\) in 1 batch`),
    );
    const again = (
      await operator(['redrive', '--channel', channel, '--error-code', errorCode, '--json'])
    ).json<RedriveResult>();
    expect(again).toMatchObject({ eligible: 0 });

    const [cycle, after] = await step(runbook, 'verify');
    expectSample(runbook, 'verify', cycle, after);
    expect(cycle?.stdout).toMatch(new RegExp(`processed ${outageTerminal}: `));
    expect(after?.stdout).not.toMatch(new RegExp(`\\s${errorCode}\\s`));
    expect(after?.stdout).toMatch(new RegExp(`^${channel}\\s+recipient_rejected\\s+1\\s`, 'm'));
    expect(await terminalCount(ds, channel, errorCode)).toBe(0);
    // The address error was never redriven: still its one attempt-spent row, untouched.
    expect(await terminalCount(ds, channel, 'recipient_rejected')).toBe(1);
  });
});

/** What a sample output shows that the demo decides (counts, channels, error codes), not the clock (times, run ids, durations). */
const DEMO_DECIDED =
  /^(CHANNEL\s|email\s|in_app\s|push\s|sms\s|\(total\)\s|processed |left out|dry run|redriven|no terminal)/;

function decided(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => DEMO_DECIDED.test(line))
    .map((line) =>
      line
        .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '<time>')
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>'),
    );
}

/** The runbook's sample output for a step is what the step printed on the demo, line for line where the demo decides it. */
function expectSample(
  runbook: RunbookCommands,
  step: string,
  ...runs: Array<OpsRun | undefined>
): void {
  const printed = runs.map((run) => run?.stdout ?? '').join('');
  if (process.env.SHOW_REHEARSAL) return;
  expect({ step, lines: decided(runbook.sampleOutput(step)) }).toEqual({
    step,
    lines: decided(printed),
  });
}

/** The CLI's own error lines (`ops: …`); the library's JSON log lines (item-retried, item-failed-terminal) are the cycle's business. */
function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line !== '' && !line.startsWith('{'));
}

/**
 * Time passes for the rows: every due and scheduled time moves that much into
 * the past, as the database clock would see them that much later. Rows under a
 * claim are left alone (none are: no cycle runs meanwhile).
 */
async function minutesPass(ds: DataSource, minutes: number): Promise<void> {
  await ds.query(
    `UPDATE notifications
        SET next_attempt_at = next_attempt_at - make_interval(mins => $1),
            scheduled_at = scheduled_at - make_interval(mins => $1)
      WHERE claim_token IS NULL`,
    [minutes],
  );
}

async function terminalCount(ds: DataSource, channel: string, errorCode: string): Promise<number> {
  const rows = await ds.query<Array<{ count: number }>>(
    `SELECT count(*)::int AS count FROM notifications
      WHERE channel = $1 AND status = 'Failed' AND next_attempt_at IS NULL AND last_error_code = $2`,
    [channel, errorCode],
  );
  return rows[0].count;
}
