import type { Profiler } from 'node:inspector';
import type { BenchSystem } from './bench-system';
import { CpuProfiler } from './cpu-profile';
import { classifyProfile, type ProfileBreakdown } from './profile-categories';
import { progress } from './progress';
import type { RateHistory } from './rate-history';
import { runRound, type CellRun, type ThroughputContext } from './throughput';

/** Fine enough for a few thousand samples in a 3 s window, coarse enough to cost little. */
export const SAMPLING_INTERVAL_US = 200;
const PROFILED_ATTEMPTS = 3;

export interface ProfiledCell {
  readonly system: BenchSystem['name'];
  readonly run: CellRun;
  readonly breakdown: ProfileBreakdown;
  readonly samplingIntervalUs: number;
}

/**
 * One more cell of `system` at 0 ms, not counted in the figures (the profiler
 * slows it), with V8's sampling profiler running over its measured window
 * only: where the CPU of a row goes (profile-categories.ts).
 */
export async function profileCell(
  context: ThroughputContext,
  history: RateHistory,
  system: BenchSystem,
): Promise<ProfiledCell> {
  const profiler = await CpuProfiler.open(SAMPLING_INTERVAL_US);
  // Chained: a round run again on a larger backlog starts a profile only once the last one stopped.
  let pending: Promise<unknown> = Promise.resolve();
  const taken: { profile: Promise<Profiler.Profile> | null } = { profile: null };
  try {
    let run: CellRun | null = null;
    // A window with fewer than two returns has no rate: the process was stalled through it (seen
    // on a shared host: 22 samples in a 0.4 s window). It is measured again, up to three times.
    for (let attempt = 1; attempt <= PROFILED_ATTEMPTS; attempt++) {
      taken.profile = null;
      const round = await runRound(context, history, [system], 0, 'profiled', {
        open: () => {
          pending = pending.then(() => profiler.start());
        },
        close: () => {
          const stopped = pending.then(() => profiler.stop());
          pending = stopped;
          taken.profile = stopped;
        },
      });
      [[, run]] = round;
      if (Number.isFinite(run.rowsPerSec)) break;
      progress(`profiled cell: no rate in its window (attempt ${attempt} of ${PROFILED_ATTEMPTS})`);
    }
    if (!run) throw new Error('the profiled cell did not run');
    if (!taken.profile) throw new Error('the profiled cell ended before its window opened');
    const breakdown = classifyProfile(await taken.profile);
    const other = breakdown.uncategorised
      .slice(0, 8)
      .map((f) => `${f.samples} ${f.frame}`)
      .join('; ');
    progress(
      `profile: ${breakdown.total} samples, ${breakdown.samples.get('other')} other (top: ${other || 'none'})`,
    );
    return { system: system.name, run, breakdown, samplingIntervalUs: SAMPLING_INTERVAL_US };
  } finally {
    await pending.catch(() => undefined);
    await profiler.close();
  }
}
