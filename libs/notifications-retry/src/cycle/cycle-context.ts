import type { Span } from '@opentelemetry/api';
import type { ChannelConfig } from '../channels/channel-config';
import type { Lease } from '../locking/lease';
import type { ProviderAdapter } from '../providers/provider-adapter';
import type { ItemResult } from './row-transition';
import type { TimingTally } from './timing-tally';

/** A channel taking part in the cycle, with the adapter that sends for it. */
export interface EligibleChannel {
  readonly config: ChannelConfig;
  readonly adapter: ProviderAdapter;
}

/** What every unit of work of one cycle shares. */
export interface CycleContext {
  readonly runId: string;
  readonly correlationId: string;
  /** The due threshold of the cycle. */
  readonly now: Date;
  readonly lease: Lease;
  /** Cuts provider calls in flight: shutdown grace over, or the lease lost. */
  readonly interrupt: AbortController;
  /** The cycle's span; provider-call spans are its children. */
  readonly span: Span;
  /** How long the claims and the outcome writes took, for the cycle report. */
  readonly timings: { readonly claim: TimingTally; readonly settle: TimingTally };
}

/** How one candidate ended: an outcome written, or why nothing was. */
export type ItemOutcome = ItemResult | 'skipped' | 'error' | 'lease-lost';
