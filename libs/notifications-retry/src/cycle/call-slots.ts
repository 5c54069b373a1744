import { performance } from 'node:perf_hooks';
import type { ClaimAhead } from './claim-ahead';
import type { ResolvedChannels } from './channel-resolver';
import type { ClaimedRow } from './claimed-row';
import type { CycleState, EligibleChannel } from './cycle-state';
import type { DispatchQueue } from './dispatch-queue';
import type { RowRunner } from './row-runner';
import type { Wakeup } from './wakeup';

/**
 * One cycle's call slots (DESIGN §3.4: `concurrency` bounds calls in flight,
 * not outcome writes). A row takes a slot when it starts and gives it back as
 * soon as its call is decided. The next queued row takes the slot as soon as
 * the cycle's loop runs: at once when the loop waits for a slot (the call's
 * end wakes it), else in the next turn of the event loop, so a slot freed
 * while a claim is on its way does not wait for the claim.
 */
export class CallSlots {
  /** Every started row until its outcome is written (or it is handed back). */
  readonly running = new Set<Promise<void>>();
  /** Started rows whose call is not decided yet. */
  private calls = 0;
  private refill: NodeJS.Immediate | null = null;
  private closed = false;

  constructor(
    private readonly concurrency: number,
    private readonly cycle: CycleState,
    private readonly channels: ResolvedChannels,
    private readonly queue: DispatchQueue<ClaimedRow>,
    private readonly ahead: ClaimAhead,
    private readonly runner: RowRunner,
    private readonly wakeup: Wakeup,
    private readonly stop: AbortSignal,
  ) {}

  /** Calls in flight. */
  get busy(): number {
    return this.calls;
  }

  /**
   * Rows a claim may take now: the free slots and what is claimed ahead of
   * them, less what waits in the queue. Rows held (waiting, calling, or being
   * written) stay within the slots, as many claimed ahead, and what the write
   * statements carry at once: rows written are held too, and a bound without
   * them left slots idle for want of claimed rows whenever writes took a while
   * (a slot waited 5.4 ms for its next row at 50 ms, against 2.8 ms with them).
   * Past that bound writes have fallen behind, and nothing more is claimed
   * until they catch up.
   */
  free(): number {
    const slots = this.concurrency + this.ahead.rows(performance.now()) - this.calls;
    const held = 2 * this.concurrency + this.cycle.writer.capacity - this.running.size;
    return Math.min(slots, held) - this.queue.size;
  }

  /**
   * Starts as many queued rows as slots and channel limits allow. Returns how
   * long until a queued row may start by its channel's pace (Infinity: only a
   * finished call can change anything).
   */
  fill(): number {
    while (this.calls < this.concurrency) {
      const decision = this.queue.next(performance.now());
      if (decision.kind === 'wait') return decision.waitMs;
      if (decision.kind === 'empty') break;
      this.start(decision.row);
    }
    return Number.POSITIVE_INFINITY;
  }

  /** How long a row claimed now may wait in the queue (see ClaimAhead). */
  queueWaitMs(): number {
    return this.ahead.queueWaitMs(performance.now());
  }

  /** Nothing more starts; resolves when every started row is written or handed back. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.refill) clearImmediate(this.refill);
    await Promise.allSettled(this.running);
  }

  private start(row: ClaimedRow): void {
    const channel = this.channels.eligible.get(row.channel) as EligibleChannel;
    this.cycle.running.set(row.id, row.claimedUntil);
    this.calls++;
    let calling = true;
    const callEnded = (): void => {
      if (!calling) return;
      calling = false;
      this.calls--;
      this.queue.done(row);
      this.ahead.callEnded(performance.now());
      this.fillSoon();
      this.wakeup.notify();
    };
    const task: Promise<void> = this.runner.run(this.cycle, row, channel, callEnded).finally(() => {
      callEnded();
      this.cycle.running.delete(row.id);
      this.running.delete(task);
      this.wakeup.notify();
    });
    this.running.add(task);
  }

  private fillSoon(): void {
    if (this.refill) return;
    this.refill = setImmediate(() => {
      this.refill = null;
      // What the cycle's loop checks before it starts rows.
      const stopping =
        this.closed ||
        this.stop.aborted ||
        this.cycle.stopReason !== null ||
        performance.now() >= this.cycle.deadline;
      if (!stopping) this.fill();
    });
  }
}
