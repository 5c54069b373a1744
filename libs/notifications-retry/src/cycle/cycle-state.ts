import type { Span } from '@opentelemetry/api';
import type { ChannelConfig } from '../channels/channel-config';
import { LeaseLostError } from '../errors/lease-lost.error';
import type { Lease } from '../vocabulary/lease';
import type { ProviderAdapter } from '../providers/provider-adapter';
import type { CycleCounts, CycleStopReason } from '../vocabulary/cycle-report';
import type { LeaseLossCause } from './lease-loss';
import type { OutcomeWriter } from './outcome-writer';
import { CycleInterrupt } from './cycle-interrupt';
import { TimingTally } from './timing-tally';

/** A channel taking part in the cycle, with the adapter that sends for it. */
export interface EligibleChannel {
  readonly config: ChannelConfig;
  readonly adapter: ProviderAdapter;
}

/** Everything one cycle knows and changes, in one object. */
export class CycleState {
  readonly counts: { -readonly [K in keyof CycleCounts]: CycleCounts[K] } = {
    processed: 0,
    sent: 0,
    retried: 0,
    terminal: 0,
    deferred: 0,
    skipped: 0,
    claimsLost: 0,
    errors: 0,
  };
  readonly timings = { claim: new TimingTally(), settle: new TimingTally() };
  /** Cuts provider calls in flight: shutdown grace over, or the lease lost. */
  readonly interrupt = new CycleInterrupt();
  /** Rows claimed so far (a cycle claims `batchSize` at most, unless draining). */
  claimed = 0;
  maxLagMs = 0;
  private reason: CycleStopReason | null = null;
  private loss: LeaseLossCause | null = null;

  constructor(
    readonly runId: string,
    readonly correlationId: string,
    /** The due threshold, and the time backoff counts from at the start. */
    readonly now: Date,
    readonly lease: Lease,
    readonly span: Span,
    readonly writer: OutcomeWriter,
    /** `performance.now()` instants: the start, no claim after `deadline`, no connection wait past `connectBy`. */
    readonly startedAt: number,
    readonly deadline: number,
    readonly connectBy: number,
  ) {}

  get stopReason(): CycleStopReason | null {
    return this.reason;
  }

  get leaseLoss(): LeaseLossCause | null {
    return this.loss;
  }

  /** The first reason given is the one reported. */
  stop(reason: CycleStopReason): void {
    this.reason ??= reason;
  }

  /** Nothing more is written under this lease: stop, and cut the calls in flight. */
  loseLease(cause: LeaseLossCause): void {
    if (this.loss) return;
    this.loss = cause;
    this.reason = 'lease-lost';
    this.interrupt.abort(new LeaseLostError(this.lease.key, this.lease.fencingToken));
  }

  /**
   * Rows this cycle handed back, or wrote due again at its own `now` (a zero
   * backoff under a clock that stands still): later claims of the cycle leave
   * them out, so no row is sent twice, or claimed in a loop, in one cycle.
   */
  readonly dueAgain = new Set<string>();
  /**
   * Rows whose call and outcome write are under way in this cycle, with when
   * their claims lapse (`performance.now()`).
   */
  readonly running = new Map<string, number>();

  recordLag(lagMs: number): void {
    this.maxLagMs = Math.max(this.maxLagMs, lagMs);
  }
}
