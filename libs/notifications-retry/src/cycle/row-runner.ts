import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { RandomSource } from '../clock/random-source';
import { OutboxWakeUp } from '../outbox/outbox-wake-up';
import { OutboxWriter } from '../outbox/outbox.writer';
import { ClaimRelease } from './claim-release';
import type { ClaimedRow } from './claimed-row';
import { CycleReporter } from './cycle-reporter';
import type { CycleState, EligibleChannel } from './cycle-state';
import { ProviderCaller, type CallResult } from './provider-caller';
import type { RowTransition } from './row-transition';
import { settleRow } from './settle-row';
import { TurnGate } from './turn-gate';

/** Answers settled per turn of the event loop (about a millisecond of work). */
const ANSWERS_PER_TURN = 16;

/**
 * Runs one claimed row: call its provider, settle the answer into a
 * transition, write it fenced by the lease, and say what happened (River's
 * job executor). Rows that must not be called, or whose call was cut, go back
 * to the table untouched.
 */
@Injectable()
export class RowRunner {
  private readonly turns = new TurnGate(ANSWERS_PER_TURN);

  constructor(
    private readonly caller: ProviderCaller,
    private readonly claims: ClaimRelease,
    private readonly reporter: CycleReporter,
    private readonly outbox: OutboxWriter,
    private readonly outboxWakeUp: OutboxWakeUp,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  /**
   * One row's call and outcome. Never throws: an unexpected error is logged
   * and the row's claim lapses, which makes it due again. `callEnded` is
   * told once, as soon as the row needs its call slot no more (its outcome
   * decided, or no call to make): the slot bounds calls, not writes, so the
   * next row starts while this one's outcome is written.
   */
  async run(
    cycle: CycleState,
    row: ClaimedRow,
    channel: EligibleChannel,
    callEnded: () => void = () => undefined,
  ): Promise<void> {
    try {
      // A row that waited in the queue so long that its call's timeout would outlast the claim goes
      // back (a wait shorter than that only shortens how long a late answer is awaited).
      if (performance.now() + channel.config.timeoutMs > row.claimedUntil) {
        callEnded();
        return await this.handBack(cycle, [row], 'claim-too-short');
      }
      let call: CallResult;
      try {
        call = await this.caller.call(cycle, row, channel);
      } finally {
        callEnded();
      }
      // What follows (settle, outbox event, write) waits for its turn: a wave of answers is then
      // handled a slice at a time, and the timers and I/O of the process run in between.
      await this.turns.turn();
      const settlement = settleRow(
        row,
        channel,
        call,
        this.clock.now(),
        this.random.next(),
        this.outbox,
        cycle,
      );
      if (settlement.kind === 'release') return await this.handBack(cycle, [row], 'call-cut');
      const result = await cycle.writer.write(settlement);
      if (result.kind === 'lease-lost') {
        cycle.loseLease(result.cause);
        // The call is over: the claim goes back, so the lease's new owner need not wait for it.
        return await this.handBack(cycle, [row], 'lease-lost');
      }
      if (result.kind === 'written') {
        // The relay of this process publishes the event now rather than at its next poll.
        if (settlement.event) this.outboxWakeUp.eventsWritten();
        if (isDueAt(settlement.transition, cycle.now)) cycle.dueAgain.add(row.id);
      }
      await this.reporter.written(cycle, channel, settlement, result);
      // No provider was called: nothing happened that the claim's lapse should hold back.
      if (result.kind === 'not-written' && !settlement.hold)
        await this.handBack(cycle, [row], 'not-written');
    } catch (error) {
      this.reporter.rowError(cycle, row, error);
    }
  }

  /** Hands claimed rows back untouched; if that fails, their claims lapse instead. */
  async handBack(cycle: CycleState, rows: readonly ClaimedRow[], reason: string): Promise<void> {
    if (rows.length === 0) return;
    // Not claimed again by this cycle: whatever sent it back would most likely do so again.
    for (const row of rows) cycle.dueAgain.add(row.id);
    try {
      this.reporter.released(cycle, await this.claims.release(rows), reason);
    } catch (error) {
      this.reporter.releaseFailed(cycle, rows.length, error);
    }
  }
}

/** Whether a row written with `transition` is due at `now` (what the generated due_at says). */
function isDueAt(transition: RowTransition, now: Date): boolean {
  const dueAt =
    transition.status === 'Failed'
      ? transition.nextAttemptAt
      : transition.status === 'Pending'
        ? transition.scheduledAt
        : null;
  return dueAt !== null && dueAt.getTime() <= now.getTime();
}
