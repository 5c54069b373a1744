import { execFile } from 'node:child_process';
import { hostname } from 'node:os';
import { createServer, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Command, CommandRunner } from 'nest-commander';
import type { DataSource } from 'typeorm';
import {
  NotificationsRetryModule,
  type CycleReport,
  type OperationsStatusReport,
} from '@pin/notifications-retry';
import {
  NotificationsRetryOpsModule,
  runNotificationsRetryOps,
  type OpsHostContext,
} from '@pin/notifications-retry/ops-cli';
import { OPS_CONNECT_TIMEOUT_MS } from '../apps/pin-notifications/src/ops/ops-typeorm-root';
import { seedDemoData } from '../src/demo/seed-demo-data';
import { insertChannel } from './support/fixtures';
import { capturedIo, ops } from './support/ops-cli';
import { insertTerminal, operatorActions } from './support/operations-fixtures';
import { adaptersModule } from './support/retry-test-app';
import { ScriptedProviderAdapter } from './support/scripted-provider-adapter';
import {
  createMigratedDatabase,
  dataSourceOptions,
  type TestDatabase,
} from './support/test-database';

const run = promisify(execFile);

describe('ops CLI: arguments, exit codes, --json (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const adapters = [adaptersModule([ScriptedProviderAdapter])];
  const cli = (...argv: string[]) => ops(argv, db.url, adapters);

  beforeAll(async () => {
    ({ db, dataSource: ds } = await createMigratedDatabase());
    await insertChannel(ds, { key: 'email' });
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('npm run ops -- --help lists every command (a real process, no database needed)', async () => {
    const { stdout } = await run('npm', ['run', '-s', 'ops', '--', '--help'], {
      cwd: `${__dirname}/..`,
      env: { ...process.env, DATABASE_URL: '' },
    });
    for (const command of ['status', 'terminal', 'redrive', 'channel', 'cycle', 'lease']) {
      expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
  }, 60_000);

  it('lists subcommands and their options in help', async () => {
    const terminal = await cli('terminal', '--help');
    expect(terminal.code).toBe(0);
    expect(terminal.stdout).toMatch(/list/);
    expect(terminal.stdout).toMatch(/stats/);
    const redrive = await cli('redrive', '--help');
    expect(redrive.stdout).toMatch(/--dry-run/);
    expect(redrive.stdout).toMatch(/--yes/);
  });

  it.each([
    [['terminal', 'list', '--bogus'], /unknown option/],
    [['terminal', 'list', '--limit', '0'], /--limit must be an integer/],
    [['terminal', 'stats', '--since', 'yesterday'], /--since must be/],
    [['redrive', '--dry-run', '--yes', '--channel', 'email'], /contradict/],
    [['redrive', '--yes', '--channel', 'email'], /needs --reason/],
    [['redrive'], /needs a filter .*--all/],
    [['redrive', '--ids', 'nope'], /ids must be UUIDs/],
    [['channel', 'pause'], /missing required argument/],
    [['channel', 'pause', 'email'], /needs --reason/],
    [['lease', 'release', '--reason', 'x'], /--fencing-token/],
    [['lease', 'release', '--fencing-token', '-1', '--reason', 'x'], /fencing-token/],
    [['terminal'], /needs a subcommand/],
    [['frobnicate'], /unknown command/],
  ])('exits 2 on bad arguments: %j', async (argv, message) => {
    const result = await cli(...argv);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('exits 2 without DATABASE_URL, saying so, as JSON with --json', async () => {
    const result = await ops(['status', '--json'], undefined);
    expect(result.code).toBe(2);
    expect(result.json()).toEqual({
      error: { code: 'bad_arguments', message: expect.stringMatching(/DATABASE_URL is not set/) },
    });
  });

  it('exits 3 when refused: unknown channel, live lease of another owner, cycle skipped for the lease', async () => {
    const unknown = await cli('channel', 'pause', 'emial', '--reason', 'typo', '--json');
    expect(unknown.code).toBe(3);
    expect(unknown.json()).toMatchObject({ error: { code: 'operation_refused' } });

    await ds.query(
      `INSERT INTO distributed_locks (key, owner, fencing_token, acquired_at, expires_at)
       VALUES ('notifications:retry-worker', 'host-a:1:x', 4, now(), now() + interval '5 minutes')`,
    );
    try {
      const live = await cli('lease', 'release', '--fencing-token', '4', '--reason', 'stuck');
      expect(live.code).toBe(3);
      expect(live.stderr).toMatch(/name that owner/);
      const skipped = await cli('cycle', 'run', '--json');
      expect(skipped.code).toBe(3);
      expect(skipped.json()).toMatchObject({ status: 'skipped', skipReason: 'lease-held' });

      const released = await cli(
        'lease',
        'release',
        '--fencing-token',
        '4',
        '--owner',
        'host-a:1:x',
        '--reason',
        'stuck host',
        '--json',
      );
      expect(released.code).toBe(0);
      expect(released.json()).toEqual({
        key: 'notifications:retry-worker',
        owner: 'host-a:1:x',
        fencingToken: 4,
        wasLive: true,
      });
    } finally {
      await ds.query(`DELETE FROM distributed_locks`);
    }
  });

  it('prints JSON for status, terminal list and stats, redrive, pause/resume and cycle run, exit 0', async () => {
    const id = await insertTerminal(ds, {
      channel: 'email',
      errorCode: 'provider_unavailable',
      address: 'zed@example.org',
      // As another writer may store it: the provider's text quoting the recipient.
      errorMessage: 'mailbox zed@example.org unavailable',
    });

    const status = await cli('status', '--json');
    expect(status.code).toBe(0);
    expect(status.json()).toMatchObject({
      totals: { terminal: 1 },
      channels: [{ channel: 'email', terminal: 1 }],
    });

    const list = await cli('terminal', 'list', '--channel', 'email', '--since', '1h', '--json');
    expect(list.json()).toMatchObject({
      rows: [
        {
          id,
          maskedAddress: 'z***@***.org',
          errorCode: 'provider_unavailable',
          errorMessage: 'mailbox [redacted] unavailable',
        },
      ],
    });
    expect(list.stdout).not.toMatch(/zed@example/);
    const text = await cli('terminal', 'list');
    expect(text.stdout).toMatch(/z\*\*\*@\*\*\*\.org/);

    const stats = await cli('terminal', 'stats', '--json');
    expect(stats.json()).toMatchObject({
      stats: [{ channel: 'email', errorCode: 'provider_unavailable', count: 1 }],
    });

    const dry = await cli('redrive', '--error-code', 'provider_unavailable', '--json');
    expect(dry.json()).toMatchObject({ dryRun: true, eligible: 1, redriven: 0 });
    const applied = await cli(
      'redrive',
      '--error-code',
      'provider_unavailable',
      '--yes',
      '--reason',
      'provider fixed',
      '--actor',
      'jane',
      '--json',
    );
    expect(applied.code).toBe(0);
    expect(applied.json()).toMatchObject({ dryRun: false, redriven: 1, batches: 1 });

    expect(
      (await cli('channel', 'pause', 'email', '--reason', 'outage', '--json')).json(),
    ).toMatchObject({ changed: true, paused: true });
    const cycle = await cli('cycle', 'run', '--json');
    expect(cycle.code).toBe(0);
    expect(cycle.json()).toMatchObject({
      status: 'completed',
      excludedChannels: [{ channel: 'email', reason: 'paused' }],
    });
    expect(
      (await cli('channel', 'resume', 'email', '--reason', 'back', '--json')).json(),
    ).toMatchObject({ changed: true, paused: false });
    const sent = await cli('cycle', 'run', '--json');
    expect(sent.json()).toMatchObject({ status: 'completed', counts: { sent: 1 } });

    expect((await operatorActions(ds)).map((a) => [a.action, a.actor])).toEqual([
      ['lease-release', expect.stringMatching(/^cli:/)],
      ['redrive', 'jane'],
      ['channel-pause', expect.stringMatching(/^cli:/)],
      ['channel-resume', expect.stringMatching(/^cli:/)],
    ]);
  });
  it('records the operator as cli:$USER@host from the environment it was given, without --actor', async () => {
    const paused = await ops(
      ['channel', 'pause', 'email', '--reason', 'who ran this', '--json'],
      db.url,
      adapters,
      { USER: 'oncall-ana' },
    );
    expect(paused.code).toBe(0);
    await ops(
      ['channel', 'resume', 'email', '--reason', 'back', '--actor', 'ana'],
      db.url,
      adapters,
    );
    const actions = await operatorActions(ds);
    expect(actions.slice(-2).map((a) => [a.action, a.actor])).toEqual([
      ['channel-pause', `cli:oncall-ana@${hostname()}`],
      ['channel-resume', 'ana'],
    ]);
  });
});

describe('ops CLI: one contract on every path (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const cli = (...argv: string[]) => ops(argv, db.url, [adaptersModule([ScriptedProviderAdapter])]);

  beforeAll(async () => {
    ({ db, dataSource: ds } = await createMigratedDatabase());
    await insertChannel(ds, { key: 'email' });
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it.each([
    [['terminal', 'list', '--bogus', '--json'], /unknown option '--bogus'/],
    [['channel', 'pause', '--json'], /missing required argument 'key'/],
    [['frobnicate', '--json'], /unknown command 'frobnicate'/],
    [['terminal', 'list', '--limit', 'x', '--json'], /--limit must be an integer/],
    [['redrive', '--json'], /--all/],
    [['channel', 'pause', 'email', '--json'], /--reason/],
  ])("answers JSON for argument errors, commander's own included: %j", async (argv, message) => {
    const result = await cli(...argv);
    expect(result.code).toBe(2);
    expect(result.json()).toEqual({
      error: { code: 'bad_arguments', message: expect.any(String) },
    });
    expect(result.json<{ error: { message: string } }>().error.message).toMatch(message);
  });

  it.each([
    ['terminal list', ['terminal', 'list', '--channel', 'nope']],
    ['terminal stats', ['terminal', 'stats', '--channel', 'nope']],
    ['redrive', ['redrive', '--channel', 'nope']],
    ['channel pause', ['channel', 'pause', 'nope', '--reason', 'typo']],
    ['channel resume', ['channel', 'resume', 'nope', '--reason', 'typo']],
  ])('refuses an unknown channel the same way: %s', async (operation, argv) => {
    const text = await cli(...argv);
    const json = await cli(...argv, '--json');
    const label = operation.startsWith('channel') ? '<key>' : '--channel';
    const message = `${operation} refused: ${label} "nope": the channel catalog has no such channel (known: email)`;
    expect({ code: text.code, stderr: text.stderr }).toEqual({
      code: 3,
      stderr: `ops: refused: ${message}\n`,
    });
    expect({ code: json.code, json: json.json() }).toEqual({
      code: 3,
      json: { error: { code: 'operation_refused', message } },
    });
    expect(await operatorActions(ds)).toEqual([]);
  });

  it('exits 2 within about 10 s with the cause when the database refuses the connection', async () => {
    const port = await closedPort();
    const started = Date.now();
    const result = await ops(['status', '--json'], `postgres://ops:secret@127.0.0.1:${port}/pin`);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.code).toBe(2);
    expect(result.json()).toEqual({
      error: {
        code: 'database_unreachable',
        message: expect.stringMatching(
          new RegExp(`unreachable: .*ECONNREFUSED.*127\\.0\\.0\\.1:${port}`),
        ),
      },
    });
    expect(result.stdout + result.stderr).not.toMatch(/secret/);
  });

  it("exits 2 with the server's reason when it refuses the session (no such role, no such database)", async () => {
    const server = new URL(db.url);
    const noRole = new URL(server);
    noRole.username = 'no_such_role_19';
    noRole.password = 'secret';
    const noDatabase = new URL(server);
    noDatabase.pathname = '/no_such_database_19';
    for (const [url, reason] of [
      // Trust auth says the role is missing; password auth (the embedded server) says it cannot log in.
      [
        noRole,
        /role "no_such_role_19" does not exist.*28000|password authentication failed for user "no_such_role_19".*28P01/,
      ],
      [noDatabase, /database "no_such_database_19" does not exist.*3D000/],
    ] as const) {
      const result = await ops(['status', '--json'], url.toString());
      expect({ code: result.code, json: result.json() }).toEqual({
        code: 2,
        json: {
          error: {
            code: 'database_unreachable',
            message: expect.stringMatching(reason),
          },
        },
      });
      expect(result.stdout + result.stderr).not.toMatch(/secret/);
    }
  });

  it('exits 2 within about 10 s with the cause when the database never answers (a black hole)', async () => {
    const silent = await silentServer();
    try {
      const started = Date.now();
      const result = await ops(['status'], `postgres://ops:secret@127.0.0.1:${silent.port}/pin`);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(OPS_CONNECT_TIMEOUT_MS - 500);
      expect(elapsed).toBeLessThan(10_000);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/ops: the database is unreachable: .*timeout/i);
      expect(result.stdout).toBe('');
    } finally {
      await silent.close();
    }
  }, 30_000);
});

describe("ops CLI over the demo app's module graph (real PostgreSQL)", () => {
  let db: TestDatabase;
  let ds: DataSource;
  // The demo app's environment as an operator sets it: its database, and SEED_DEMO_DATA as docker compose sets it.
  const demo = (...argv: string[]) => ops(argv, db.url, [], { SEED_DEMO_DATA: 'true' });

  beforeAll(async () => {
    ({ db, dataSource: ds } = await createMigratedDatabase());
    await seedDemoData(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('status finds the adapters the demo worker sends email and push with', async () => {
    const status = (await demo('status', '--json')).json<OperationsStatusReport>();
    expect(status.excludedChannels).toEqual([{ channel: 'sms', reason: 'disabled' }]);
    // Without the demo's graph (a plain module), email and push would have no adapter to send with.
    const plain = (await ops(['status', '--json'], db.url)).json<OperationsStatusReport>();
    expect(plain.excludedChannels).toEqual(
      expect.arrayContaining([
        { channel: 'email', reason: 'no-provider-adapter' },
        { channel: 'push', reason: 'provider-disabled' },
      ]),
    );
  });

  it('cycle run --drain attempts every due row of the enabled channels', async () => {
    const before = (await demo('status', '--json')).json<OperationsStatusReport>();
    const due = before.channels
      .filter((c) => c.channel !== 'sms')
      .reduce((sum, c) => sum + c.due, 0);
    expect(due).toBeGreaterThan(20);
    const run = await demo('cycle', 'run', '--drain', '--json');
    expect(run.code).toBe(0);
    const report = run.json<CycleReport>();
    expect(report).toMatchObject({ status: 'completed', counts: { processed: due } });
    const after = (await demo('status', '--json')).json<OperationsStatusReport>();
    expect(
      after.channels.filter((c) => c.channel !== 'sms').map((c) => [c.channel, c.due]),
    ).toEqual(before.channels.filter((c) => c.channel !== 'sms').map((c) => [c.channel, 0]));
    const seeded: Array<{ count: string }> = await ds.query(
      `SELECT count(*) FROM notifications WHERE channel = 'email' AND provider_message_id LIKE 'demo-%'`,
    );
    expect(Number(seeded[0].count)).toBeGreaterThan(0);
  });
});

describe("the library's ops commands mounted in another host's nest-commander root", () => {
  let db: TestDatabase;
  let ds: DataSource;
  const provider = new ScriptedProviderAdapter();

  /** A team's host module, built for the CLI the way the README shows: its own TypeORM root and adapter. */
  const teamHost = (context: OpsHostContext, applyOverrides = true) => {
    @Module({
      imports: [
        TypeOrmModule.forRoot({ ...dataSourceOptions(db.url), migrationsRun: false }),
        NotificationsRetryModule.forRoot({
          batchSize: 50,
          ...(applyOverrides ? context.retry : { instanceId: 'forgot-the-overrides' }),
        }),
        adaptersModule([{ provide: ScriptedProviderAdapter, useValue: provider }]),
      ],
    })
    class TeamHostModule {}
    return TeamHostModule;
  };

  @Command({ name: 'hello', description: "the team's own command" })
  class HelloCommand extends CommandRunner {
    static said = 0;
    run(): Promise<void> {
      HelloCommand.said++;
      return Promise.resolve();
    }
  }

  /** The team's CLI entry: its root module mounts the library's commands beside its own; one run per call. */
  const teamCli =
    (applyOverrides = true) =>
    async (...argv: string[]) => {
      const { io, result } = capturedIo();
      @Module({
        imports: [
          NotificationsRetryOpsModule.forRoot({
            host: (context) => teamHost(context, applyOverrides),
            io,
            defaultActor: () => 'team-cli',
          }),
        ],
        providers: [HelloCommand],
      })
      class TeamCliModule {}
      return result(await runNotificationsRetryOps(TeamCliModule, argv, { cliName: 'team-ops' }));
    };

  beforeAll(async () => {
    ({ db, dataSource: ds } = await createMigratedDatabase());
    await insertChannel(ds, { key: 'email' });
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it("runs the host's own commands and the library's beside them, over the host's adapter", async () => {
    const cli = teamCli();
    expect((await cli('hello')).code).toBe(0);
    expect(HelloCommand.said).toBe(1);
    const help = await cli('--help');
    expect(help.stdout).toMatch(/^Usage: team-ops/m);
    expect(help.stdout).toMatch(/^ {2}hello\b/m);
    expect(help.stdout).toMatch(/^ {2}redrive\b/m);

    const id = await insertTerminal(ds, { channel: 'email', errorCode: 'provider_unavailable' });
    const redrive = await cli(
      'redrive',
      '--ids',
      id,
      '--yes',
      '--reason',
      'provider back',
      '--json',
    );
    expect(redrive.json()).toMatchObject({ redriven: 1 });
    provider.respondWith((message) => ({ providerMessageId: `team-${message.id}` }));
    const cycle = await cli('cycle', 'run', '--json');
    expect(cycle.json()).toMatchObject({ status: 'completed', counts: { sent: 1 } });
    expect(provider.calls.map((call) => call.message.id)).toEqual([id]);
    expect((await operatorActions(ds)).map((a) => [a.action, a.actor])).toEqual([
      ['redrive', 'team-cli'],
    ]);
  });

  it('refuses to work over a host module that does not apply the overrides (a worker would run in the shell)', async () => {
    const result = await teamCli(false)('status', '--json');
    expect(result.code).toBe(1);
    expect(result.json()).toEqual({
      error: {
        code: 'failure',
        message: expect.stringMatching(
          /does not apply the CLI's overrides: enabled is true \(must be false\).*instanceId is "forgot-the-overrides"/,
        ),
      },
    });
  });
});

/** A port nothing listens on: taken, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Accepts connections and never says a word: a database behind a black-holing firewall, as the client sees it. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
