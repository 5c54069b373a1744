/**
 * How many rows a busy cycle claims beyond its free call slots, so that a slot
 * freed while a claim is on its way starts a row at once instead of waiting
 * for the claim (graphile-worker's local queue, sized by time rather than by
 * count): as many rows as calls end in `horizonMs` at the rate they ended
 * lately, within `cap`. A row claimed ahead waits about that long in the
 * queue, and its claim is that much longer (`queueWaitMs`); slow providers
 * end few calls, so little is claimed ahead of them. Nothing is claimed ahead
 * before a call has ended: the first claim of a cycle takes the free slots only.
 */
export class ClaimAhead {
  private bucketStart: number | null = null;
  private bucketCount = 0;
  private perMs = 0;

  constructor(
    private readonly cap: number,
    private readonly horizonMs: number,
    /** How long one rate sample spans. */
    private readonly sampleMs = 100,
  ) {}

  /** A call ended (its outcome decided) at `nowMs`. */
  callEnded(nowMs: number): void {
    // The first call only starts the clock: a sample counts the calls after its start.
    if (this.bucketStart === null) {
      this.bucketStart = nowMs;
      return;
    }
    this.bucketCount++;
    const elapsed = nowMs - this.bucketStart;
    if (elapsed >= this.sampleMs) {
      const sample = this.bucketCount / elapsed;
      // Half the weight on the last sample: follows a change of pace within a few samples.
      this.perMs = this.perMs === 0 ? sample : (this.perMs + sample) / 2;
      this.bucketStart = nowMs;
      this.bucketCount = 0;
    }
  }

  /**
   * How long a row claimed now may wait in the queue for a slot: the horizon
   * while rows are claimed ahead, nothing otherwise. Its claim lasts that much
   * longer, so that the wait does not come out of its settle margin.
   */
  queueWaitMs(nowMs: number): number {
    return this.rows(nowMs) > 0 ? this.horizonMs : 0;
  }

  /** Rows to claim beyond the free slots now. */
  rows(nowMs: number): number {
    if (this.perMs === 0 || this.bucketStart === null) return 0;
    // No call ended for a while: the pace seen before says nothing about now.
    if (nowMs - this.bucketStart > 10 * this.sampleMs) return 0;
    return Math.min(this.cap, Math.ceil(this.perMs * this.horizonMs));
  }
}
