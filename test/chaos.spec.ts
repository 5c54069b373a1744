import { rmSync } from 'node:fs';
import { CHAOS_WORKER } from './chaos/chaos-config';
import { FULL_RUN, defaultOutDir, type ChaosOptions } from './chaos/chaos-options';
import { runChaos, type ChaosResult } from './chaos/run-chaos';
import { testServerUrl } from './support/test-server';

/**
 * The chaos run of `npm run chaos` at a small size: the same runner, three
 * instance processes, every fault of the plan (late successes, echoes of
 * personal data in error texts and codes among them), SIGKILLs,
 * pg_terminate_backend, a SIGTERM mid-cycle and a SIGSTOP of the lease owner
 * past its TTL, then every invariant and the personal-data scan. Assertions
 * are on the invariants only (each holds or it does not), never on timings or
 * rates.
 */
describe('chaos run (reduced size)', () => {
  const options: ChaosOptions = {
    ...FULL_RUN,
    rows: 600,
    // Room for a loaded machine: the run stops as soon as every row is final.
    maxDurationS: 180,
    killEveryMs: 4_000,
    terminateEveryMs: 2_500,
    groupCommitKillEveryMs: 2_000,
    sigterms: 1,
    sigstops: 1,
    concurrency: 4,
    batchSize: 30,
    spreadMs: 5_000,
    outDir: defaultOutDir(),
  };
  let result: ChaosResult;

  beforeAll(async () => {
    result = await runChaos(options, () => undefined, testServerUrl());
  }, 260_000);

  afterAll(() => {
    // Kept for inspection when something failed.
    if (result?.passed) rmSync(options.outDir, { recursive: true, force: true });
  });

  it('holds every invariant and leaks no personal data', () => {
    const failed = result.invariants.filter((i) => !i.passed);
    expect(failed.length === 0 ? 'all invariants hold' : result.report).toBe('all invariants hold');
    expect(result.scan.selfCheck).toBe(true);
    expect(result.scan.leaks).toEqual([]);
  });

  it('really did the chaos: SIGKILLs, backend terminations and a SIGTERM mid-cycle that exited 0', () => {
    expect(result.crashes.filter((c) => c.kind === 'sigkill').length).toBeGreaterThan(0);
    expect(result.crashes.filter((c) => c.kind === 'terminate').length).toBeGreaterThan(0);
    expect(result.crashes.filter((c) => c.kind === 'group-commit-kill').length).toBeGreaterThan(0);
    const sigterms = result.sigterms.filter((s) => !s.final);
    expect(sigterms).toHaveLength(1);
    expect(sigterms[0]).toMatchObject({ midCycle: true, code: 0, signal: null });
  });

  it('stopped the lease owner for longer than its lease, then let it run on', () => {
    expect(result.sigstops).toHaveLength(1);
    expect(result.sigstops[0].stoppedMs).toBeGreaterThan(CHAOS_WORKER.lockTtlMs);
  });
});
