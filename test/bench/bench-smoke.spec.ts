import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testServerUrl } from '../support/test-server';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/** The table's rows whose first column is `latency`, keyed by the system column. */
function rowsAt(table: readonly string[], latency: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of table) {
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (cells[0] === latency) rows.set(cells[1], cells);
  }
  return rows;
}

/**
 * `npm run bench` at a tiny size against the tests' PostgreSQL (it creates and
 * drops its own bench_* databases there), in a child process: pg-boss 12 is an
 * ES module, which Node's `require` loads from ts-node but jest's module loader
 * refuses. The harness still runs every system, samples the connections and
 * prints its tables. No timing is asserted; the figures of a run this small mean
 * nothing.
 */
describe('npm run bench (smoke, 2,500 rows, 20 ms)', () => {
  it('prints every system with figures, ideals and connection counts, the claim, round-trip and memory tables', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        // Transpile only: `npm test` type-checks the harness already.
        '-r',
        'ts-node/register/transpile-only',
        'test/bench/main.ts',
        ...['--rows', '2500', '--runs', '1', '--latency', '20', '--budget', '6'],
        ...['--warmup', '0.2', '--window', '0.4', '--max-window', '0.4'],
        ...['--claim-rows', '300', '--excluded-rows', '300', '--ours-concurrency', '10'],
        ...[
          '--tune',
          'pg-boss.workers=2,pg-boss.batch=5,graphile.concurrency=10,graphile.localQueue=10',
        ],
      ],
      {
        cwd: root,
        env: { ...process.env, DATABASE_URL: testServerUrl() },
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const lines = stdout.split('\n');
    const start = lines.indexOf('### Throughput on a budget of 6 connections');
    expect(start).toBeGreaterThan(-1);
    const table = lines.slice(start + 2, lines.indexOf('', start + 2));
    expect(table[0]).toContain('| calls in flight | rows/s: median (min–max) | ideal |');
    expect(table[0]).toContain(
      '| connections in use: mean / max | idle in transaction: mean / max |',
    );

    // The write limit is measured at 0 ms even when only 20 ms is asked for.
    const writeLimit = rowsAt(table, '0 ms').get('per-row write limit (`pg`)');
    expect(writeLimit?.[3]).toMatch(/^\d+/);
    const at20 = rowsAt(table, '20 ms');
    expect([...at20.keys()]).toEqual(['ours', 'pg-boss', 'graphile-worker']);
    for (const [system, cells] of at20) {
      const [, , inFlight, rowsPerSec, ideal, share, inUse, idleInTx, open] = cells;
      expect({ system, inFlight }).toEqual({ system, inFlight: expect.stringMatching(/^\d+$/) });
      expect({ system, rowsPerSec }).toEqual({
        system,
        rowsPerSec: expect.stringMatching(/^\d+/),
      });
      expect({ system, ideal, share }).toEqual({
        system,
        ideal: expect.stringMatching(/^\d+$/),
        share: expect.stringMatching(/^\d+ %$/),
      });
      expect({ system, inUse, idleInTx, open }).toEqual({
        system,
        inUse: expect.stringMatching(/^\d+\.\d \/ \d+$/),
        idleInTx: expect.stringMatching(/^\d+\.\d \/ \d+$/),
        open: expect.stringMatching(/^\d+$/),
      });
      // Every pool of the system adds up to the budget.
      expect(Number(open)).toBeLessThanOrEqual(6);
    }
    // Ours runs as many calls in flight as asked: they hold no connection of the budget's pool.
    expect(at20.get('ours')?.[2]).toBe('10');
    expect(at20.get('pg-boss')?.[2]).toBe('10');
    expect(at20.get('graphile-worker')?.[2]).toBe('10');

    expect(stdout).toContain('### Ours against the best peer');
    expect(stdout).toContain('| 300 + 300 of a disabled channel at the head |');
    expect(stdout).toMatch(/\| empty cycle \(nothing due\) \| \d+ \|/);
    expect(stdout).toContain('### Memory');
  }, 120_000);
});
