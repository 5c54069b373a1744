import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { DataSource } from 'typeorm';
import { insertChannel } from './support/fixtures';
import { ops } from './support/ops-cli';
import { insertTerminal, operatorActions } from './support/operations-fixtures';
import { adaptersModule } from './support/retry-test-app';
import { ScriptedProviderAdapter } from './support/scripted-provider-adapter';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

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
});
