import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testServerUrl } from '../support/test-server';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/**
 * `npm run bench` at a tiny size against the tests' PostgreSQL (it creates and
 * drops its own bench_* databases there): the harness still runs every system
 * and prints its tables. No timing is asserted; the figures of a run this small
 * mean nothing.
 */
describe('npm run bench (smoke, 300 rows)', () => {
  it('prints the throughput table with every system, the round trips and the memory table', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        // Transpile only: `npm test` type-checks the harness already.
        '-r',
        'ts-node/register/transpile-only',
        'test/bench/main.ts',
        ...['--rows', '300', '--runs', '1', '--seconds', '0.3', '--claim-rows', '300'],
        ...['--concurrency', '2', '--latency', '0'],
      ],
      {
        cwd: root,
        env: { ...process.env, DATABASE_URL: testServerUrl() },
        maxBuffer: 16 * 1024 * 1024,
      },
    );

    expect(stdout).toContain('### Throughput, rows/s');
    const header = stdout.split('\n').find((line) => line.startsWith('| provider latency'));
    for (const system of [
      'ours (drain)',
      'ours (no drain)',
      'raw `pg` limit',
      'pg-boss',
      'graphile-worker',
    ]) {
      expect(header).toContain(system);
    }
    const row = stdout.split('\n').find((line) => line.startsWith('| 0 ms | 2 |'));
    expect(row).toBeDefined();
    // Every system produced a figure (a number, not a dash).
    const figures = (row ?? '')
      .split('|')
      .slice(3, 8)
      .map((cell) => cell.trim());
    expect(figures.every((cell) => /^\d+$/.test(cell))).toBe(true);
    expect(stdout).toContain('### SQL round trips');
    expect(stdout).toContain('| empty cycle (nothing due) | 4 |');
    expect(stdout).toContain('### Memory');
  }, 120_000);
});
