import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { createScratchDatabase } from '../src/database/scratch-database';
import { deferred, waitFor } from './support/deferred';
import { insertChannel, insertNotification, outboxEvents } from './support/fixtures';
import { startHostApp, type HostTestApp } from './support/host-test-app';
import { scriptedAdapterFor, type ScriptedAdapter } from './support/scripted-provider-adapter';

const MailerAdapter = scriptedAdapterFor('mailer');
const REPO_ROOT = resolve(__dirname, '..');

/** Drives test/outage.postgres-server.ts: a server of this test's own that it can stop and start. */
class RestartablePostgres {
  private readonly events: Array<Record<string, unknown>> = [];

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        this.events.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a protocol line
      }
    });
  }

  static async start(): Promise<{ pg: RestartablePostgres; url: string }> {
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', join(__dirname, 'outage.postgres-server.ts')],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, TS_NODE_PROJECT: join(REPO_ROOT, 'tsconfig.json') },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const pg = new RestartablePostgres(child);
    const ready = await pg.next('ready', 60_000);
    return { pg, url: ready.url as string };
  }

  /** Fast shutdown (SIGINT to the postmaster): every session is cut, nothing new is accepted. */
  async stop(): Promise<void> {
    this.child.stdin.write('stop\n');
    await this.next('stopped', 30_000);
  }

  async restart(): Promise<void> {
    this.child.stdin.write('start\n');
    await this.next('started', 30_000);
  }

  async destroy(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.stdin.write('exit\n');
    await this.next('exited', 30_000).catch(() => this.child.kill('SIGKILL'));
  }

  private async next(event: string, timeoutMs: number): Promise<Record<string, unknown>> {
    const started = Date.now();
    for (;;) {
      const index = this.events.findIndex((e) => e.event === event || e.event === 'failed');
      if (index >= 0) {
        const [found] = this.events.splice(index, 1);
        if (found.event === 'failed') throw new Error(`postgres server: ${String(found.error)}`);
        return found;
      }
      if (Date.now() - started > timeoutMs) throw new Error(`postgres server: no ${event}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

interface NotificationState {
  id: string;
  status: string;
  attempts: number;
  events: number;
}

/**
 * PostgreSQL goes away while a cycle waits on its provider, and comes back.
 * The host app (the real AppModule, its /health and its scheduler, every
 * second) on a server of this test's own.
 */
describe('outage: PostgreSQL restarted mid-cycle (real PostgreSQL, host app)', () => {
  let pg: RestartablePostgres;
  let host: HostTestApp;
  let mailer: ScriptedAdapter;

  beforeAll(async () => {
    let serverUrl: string;
    ({ pg, url: serverUrl } = await RestartablePostgres.start());
    const db = await createScratchDatabase(serverUrl, 'outage');
    host = await startHostApp({
      databaseUrl: db.url,
      retryWorker: {
        enabled: true,
        cron: '* * * * * *',
        concurrency: 2,
        maxCycleDurationMs: 5_000,
        instanceId: 'outage-test-instance',
      },
      adapters: [MailerAdapter],
    });
    mailer = host.app.get(MailerAdapter);
  }, 120_000);

  afterAll(async () => {
    await host?.close().catch(() => undefined);
    await pg?.destroy();
  });

  async function health(): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${host.baseUrl}/health`);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  async function states(): Promise<NotificationState[]> {
    return host.dataSource.query(
      `SELECT n.id, n.status, n.attempts,
              (SELECT count(*)::int FROM notification_outbox o WHERE o.message_key = n.id::text) AS events
         FROM notifications n ORDER BY n.id`,
    );
  }

  /** Status and outbox agree: Sent with exactly one event, or Failed as it was with none. */
  function expectNothingHalfWritten(rows: NotificationState[]): void {
    for (const row of rows) {
      if (row.status === 'Sent') {
        expect(row.events).toBe(1);
        expect(row.attempts).toBeGreaterThanOrEqual(2);
      } else {
        expect(row).toMatchObject({ status: 'Failed', events: 0 });
      }
    }
  }

  async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const started = Date.now();
    while (!(await check().catch(() => false))) {
      if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('ends the cycle with a logged error and nothing half-written, /health goes down, then comes back and the next cycle delivers', async () => {
    expect((await health()).status).toBe(200);
    const gate = deferred();
    mailer.respondWith(async (message) => {
      await gate.promise;
      return { providerMessageId: `m-${message.id}` };
    });
    await insertChannel(host.dataSource, { key: 'email', providerKey: 'mailer', timeoutMs: 5_000 });
    for (let i = 0; i < 4; i++) {
      await insertNotification(host.dataSource, {
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: new Date(Date.now() - (10 - i) * 60_000),
      });
    }

    // A cycle is waiting on the provider for two rows (claimed; no connection held).
    await waitFor(() => mailer.calls.length >= 2, 15_000);
    const linesBefore = host.logLines.length;
    await pg.stop();
    gate.resolve();

    // The cycle ends with a logged error: the two outcomes could not be written, and the cycle failed.
    await waitFor(
      () =>
        host
          .logEntries()
          .slice(linesBefore)
          .some((entry) => entry.event === 'cycle-failed'),
      15_000,
    );
    const during = host.logEntries().slice(linesBefore);
    const itemErrors = during.filter((entry) => entry.event === 'item-outcome-unrecorded');
    expect(itemErrors.map((entry) => entry.notificationId)).toEqual(
      expect.arrayContaining(mailer.calls.slice(0, 2).map((call) => call.message.id)),
    );
    expect(during.find((entry) => entry.event === 'cycle-failed')).toMatchObject({
      level: 50,
      cause: 'database-unreachable',
      error: expect.stringMatching(/ECONNREFUSED|connection/),
    });
    // The lease could not be released either; the instance remembers it.
    expect(during.some((entry) => entry.event === 'lease-release-failed')).toBe(true);
    expect(during.some((entry) => entry.event === 'item-sent')).toBe(false);

    const down = await health();
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ error: { database: { status: 'down' } } });

    await pg.restart();

    // Nothing half-written: every row is as it was (or, if a cycle already ran, Sent with its event).
    expectNothingHalfWritten(await states());

    await eventually(async () => (await health()).status === 200, 20_000);
    // The instance releases the lease its dead cycle kept before its next acquire, so it resumes
    // on its next tick rather than after the 90 s TTL, and delivers every row.
    const linesAtRestart = host.logEntries().length;
    await eventually(async () => (await states()).every((row) => row.status === 'Sent'), 20_000);
    // No tick after the restart found the lease still held (by the dead cycle's own lease).
    expect(
      host
        .logEntries()
        .slice(linesAtRestart)
        .filter((entry) => entry.event === 'lease-not-acquired'),
    ).toEqual([]);
    const after = await states();
    expect(after).toHaveLength(4);
    expectNothingHalfWritten(after);
    for (const row of after) expect(await outboxEvents(host.dataSource, row.id)).toHaveLength(1);
    // At least once: the rows whose first call succeeded but never committed were sent again,
    // with the same idempotency key for the provider to deduplicate on.
    for (const call of mailer.calls.slice(0, 2)) {
      expect(mailer.callsFor(call.message.id)).toBe(2);
      expect(
        new Set(
          mailer.calls.filter((c) => c.message.id === call.message.id).map((c) => c.idempotencyKey),
        ),
      ).toEqual(new Set([call.message.id]));
    }
    expect(
      host
        .logEntries()
        .slice(linesBefore)
        .some((entry) => entry.event === 'cycle-completed'),
    ).toBe(true);
  }, 120_000);
});
