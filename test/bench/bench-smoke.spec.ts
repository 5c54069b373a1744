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
  it('prints every system with figures, ideals, costs and connection counts, the profile, claim, round-trip and memory tables', async () => {
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
    expect(table[0]).toContain(
      '| calls in flight | backlog at start | rows/s: median (min–max) | ideal | share of ideal |',
    );
    expect(table[0]).toContain(
      '| CPU µs per row | event-loop lag p50 / p99, ms | timer lateness | connections in use: mean / max | idle in transaction: mean / max |',
    );

    // Both write limits are measured at 0 ms even when only 20 ms is asked for.
    const at0 = rowsAt(table, '0 ms');
    expect([...at0.keys()]).toEqual(['per-row write limit (`pg`)', 'set-based write limit (`pg`)']);
    for (const [system, cells] of at0) {
      const [, , , backlog, rowsPerSec, , , cpu, lag, lateness] = cells;
      expect({ system, backlog, rowsPerSec, cpu, lag, lateness }).toEqual({
        system,
        backlog: expect.stringMatching(/^\d+(–\d+)?$/),
        rowsPerSec: expect.stringMatching(/^\d+/),
        cpu: expect.stringMatching(/^\d+$/),
        lag: expect.stringMatching(/^\d+\.\d \/ \d+\.\d$/),
        lateness: '–',
      });
      // No cell runs dry: the backlog grows to the fastest (here the set-based limit) first.
      expect({ system, rowsPerSec }).toEqual({
        system,
        rowsPerSec: expect.not.stringContaining('ran dry'),
      });
    }
    const at20 = rowsAt(table, '20 ms');
    expect([...at20.keys()]).toEqual(['ours', 'pg-boss', 'graphile-worker']);
    for (const [system, cells] of at20) {
      const [
        ,
        ,
        inFlight,
        backlog,
        rowsPerSec,
        ideal,
        share,
        cpu,
        lag,
        lateness,
        inUse,
        idleInTx,
        open,
      ] = cells;
      expect({ system, inFlight }).toEqual({ system, inFlight: expect.stringMatching(/^\d+$/) });
      expect({ system, backlog, cpu, lag, lateness }).toEqual({
        system,
        backlog: expect.stringMatching(/^\d+$/),
        cpu: expect.stringMatching(/^\d+$/),
        lag: expect.stringMatching(/^\d+\.\d \/ \d+\.\d$/),
        lateness: expect.stringMatching(/^-?\d+\.\d %$/),
      });
      // One round, one backlog: every system of it started from the same one.
      expect(backlog).toBe(at20.get('ours')?.[3]);
      expect({ system, rowsPerSec }).toEqual({
        system,
        rowsPerSec: expect.stringMatching(/^\d+$/),
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
    expect(stdout).toMatch(/\| 20 ms \| \d+ \| \d+ \(\S+\) \| \d+\.\d\d× \| \d+ \| \d+ % \|/);

    // The profiled cell: every part with a share and µs per row, "other" among them.
    const profileStart = lines.findIndex((l) => l.startsWith("### Where ours' CPU goes at 0 ms"));
    expect(profileStart).toBeGreaterThan(-1);
    expect(lines[profileStart + 2]).toMatch(/^\d+ rows\/s over .* \d+ samples/);
    const parts = new Map(
      lines
        .slice(profileStart + 6, lines.indexOf('', profileStart + 6))
        .map((l) =>
          l
            .split('|')
            .slice(1, -1)
            .map((c) => c.trim()),
        )
        .map(([part, share, us]) => [part, { share, us }]),
    );
    for (const part of [
      'spans',
      'metrics',
      'log line',
      'privacy',
      'claim',
      'queue',
      'call wrapper',
      'settle',
      'fake provider',
      'pg driver',
      'garbage collector',
      'other',
      'all busy',
    ]) {
      expect({ part, ...parts.get(part) }).toEqual({
        part,
        share: expect.stringMatching(/^\d+ %$/),
        us: expect.stringMatching(/^\d+\.\d$/),
      });
    }
    expect(parts.get('idle')).toEqual({ share: expect.stringMatching(/^\d+ %$/), us: '–' });
    expect(stdout).toContain('| 300 + 300 of a disabled channel at the head |');
    expect(stdout).toMatch(/\| empty cycle \(nothing due\) \| \d+ \|/);
    expect(stdout).toMatch(/### Memory: draining 2500 rows \(ours compiled to JavaScript, /);
    expect(stdout).toMatch(
      /RSS at each tenth of the drain, from the warm point: \d+\.\d( → \d+\.\d){9} MB\./,
    );
    expect(stdout).toMatch(/Heap used at the same points: \d+\.\d( → \d+\.\d){9} MB\./);
    expect(stdout).toContain('| | RSS | heap used | heap total | external |');
    expect(stdout).toMatch(
      /\| growth over the drain, from warm \| -?\d+\.\d MB \| -?\d+\.\d MB \| -?\d+\.\d MB \| -?\d+\.\d MB \|/,
    );
  }, 120_000);
});
