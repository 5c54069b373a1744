import { performance } from 'node:perf_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { ProviderCircuitBreakers } from '../circuit/provider-circuit-breakers';
import { RandomSource } from '../clock/random-source';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { CycleStopReason } from '../vocabulary/cycle-report';
import { ChannelPacer, spacingMs } from './channel-pacer';
import type { ResolvedChannels } from './channel-resolver';
import { ClaimAhead } from './claim-ahead';
import { ClaimRetry } from './claim-retry';
import type { ClaimedRow } from './claimed-row';
import type { CycleState, EligibleChannel } from './cycle-state';
import { DispatchQueue } from './dispatch-queue';
import type { ChannelClaim } from './due-row-claimer';
import { CLAIM_WRITE_ALLOWANCE_MS } from './provider-caller';
import { ProviderCallsInFlight } from './provider-calls-in-flight';

/**
 * A claim goes out once a fifth of the call slots are free: fewer, larger
 * claims (at a tenth, the claims of issue 23's 50 ms cell took so much of the
 * database that the outcome writes behind them slowed the whole cycle).
 */
const CLAIM_AT_FREE_SHARE = 0.2;
/**
 * A rate-limited channel claims the rows whose rate slots come within this
 * long, each claim stretched by its wait: a claimed row never waits long
 * enough in the queue for its claim to run short.
 */
const RATE_HORIZON_MS = 1_000;
/**
 * A paced channel claims again once what it has queued covers less than this
 * much of the horizon: a fast channel's claims take many rows each, not one
 * row per rate slot.
 */
const RATE_REFILL_MS = RATE_HORIZON_MS / 2;
/** No rate slot is claimed this close to the cycle's deadline. */
const RATE_DEADLINE_MARGIN_MS = 50;
/**
 * A running row whose claim lapses within this long (as this process sees it,
 * a little before the database does) is left out of the cycle's claims.
 */
const LAPSING_CLAIM_MARGIN_MS = 1_000;
/**
 * A busy cycle claims ahead the rows its calls free within this long (at
 * their recent pace), up to as many rows as it has call slots: enough to
 * cover a claim's round trip with the claims a fifth of the slots apart, short
 * enough that no claimed row waits long (its claim lasts its timeout, its
 * settle margin, 250 ms and, while rows are claimed ahead, this long more).
 */
const CLAIM_AHEAD_MS = 150;
const CLAIM_AHEAD_SHARE = 1;
/** The claim to send now, if any, and when one may be worth sending next. */
export interface ClaimPlan {
  readonly claim: { readonly channels: ChannelClaim[]; readonly limit: number } | null;
  readonly nextAt: number;
}

/**
 * What the cycle claims next, and when (River's producer: fetch only as many
 * rows as can start): a claim for no more rows than free call slots, channel
 * limits, open circuits and rate slots allow, leaving out the rows this
 * instance must not call again.
 */
@Injectable()
export class ClaimPlanner {
  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly pacer: ChannelPacer,
    private readonly circuits: ProviderCircuitBreakers,
    private readonly callsInFlight: ProviderCallsInFlight,
    private readonly random: RandomSource,
  ) {}

  /** A fresh record of one cycle's claims failing in a row. */
  retries(): ClaimRetry {
    return new ClaimRetry(this.random);
  }

  /** A fresh estimate of how many rows one cycle claims ahead of its free call slots. */
  claimAhead(): ClaimAhead {
    return new ClaimAhead(Math.ceil(this.options.concurrency * CLAIM_AHEAD_SHARE), CLAIM_AHEAD_MS);
  }

  /** The cycle's queue of claimed rows, dispatched by channel limits, pace and circuit. */
  queue(channels: ResolvedChannels): DispatchQueue<ClaimedRow> {
    return new DispatchQueue<ClaimedRow>(
      new Map([...channels.eligible].map(([key, channel]) => [key, channel.config])),
      this.pacer,
      (providerKey) => this.circuits.state(providerKey),
    );
  }

  /**
   * The next claim, or none when none is worth sending now; `nextAt` is when
   * a rate-paced channel may claim again (Infinity: only a finished row can
   * change anything).
   */
  next(
    cycle: CycleState,
    channels: ResolvedChannels,
    queue: DispatchQueue<ClaimedRow>,
    drained: ReadonlySet<string>,
    busy: number,
    free: number,
    queueWaitMs: number,
  ): ClaimPlan {
    const none: ClaimPlan = { claim: null, nextAt: Number.POSITIVE_INFINITY };
    const remaining = this.options.drain
      ? Number.POSITIVE_INFINITY
      : this.options.batchSize - cycle.claimed;
    const limit = Math.min(free, remaining);
    if (limit < 1) return none;
    // Busy: wait until enough slots are free for a claim worth its round trip.
    const threshold = Math.ceil(this.options.concurrency * CLAIM_AT_FREE_SHARE);
    if (busy + queue.size > 0 && limit < Math.min(threshold, remaining)) return none;
    const now = performance.now();
    const claims: ChannelClaim[] = [];
    let nextAt = Number.POSITIVE_INFINITY;
    for (const { config } of channels.eligible.values()) {
      if (drained.has(config.key)) continue;
      const share = this.share(config, queue, now, cycle.deadline);
      nextAt = Math.min(nextAt, share.nextAt);
      // The claim's fence checks the lease outlives it (DESIGN §3.3). It covers the wait for the rate
      // slot and, for rows claimed ahead, the wait for a call slot: neither comes out of the margin.
      const claimMs = this.claimMs(config) + share.waitMs + queueWaitMs;
      if (share.quota > 0)
        claims.push({ channel: config.key, quota: Math.min(share.quota, limit), claimMs });
    }
    return { claim: claims.length > 0 ? { channels: claims, limit } : null, nextAt };
  }

  /**
   * How many more rows of the channel can start now and, for a rate-limited
   * one, how long the last of them waits for its slot; or, when its next slot
   * is further off, when to ask again.
   */
  private share(
    config: EligibleChannel['config'],
    queue: DispatchQueue<ClaimedRow>,
    now: number,
    deadline: number,
  ): { quota: number; waitMs: number; nextAt: number } {
    const nothing = { quota: 0, waitMs: 0, nextAt: Number.POSITIVE_INFINITY };
    const circuit = this.circuits.state(config.providerKey);
    if (circuit === 'open') return nothing;
    // A half-open circuit lets one probe through: one row, once nothing else of it is held.
    if (circuit === 'half-open') {
      const held = queue.inFlightFor(config.providerKey) + queue.waiting(config.key);
      return { ...nothing, quota: held > 0 ? 0 : 1 };
    }
    let quota = Number.POSITIVE_INFINITY;
    if (config.maxConcurrency !== null) quota = config.maxConcurrency - queue.held(config.key);
    if (config.rateLimitPerSec === null) return { ...nothing, quota: Math.max(0, quota) };
    // Paced (DESIGN §3.4): only rows whose rate slots come within the horizon and before the
    // deadline, behind those already waiting; a claim made earlier would lapse in the queue.
    const rate = config.rateLimitPerSec;
    const first = this.pacer.slotAt(config.key, rate, now, queue.waiting(config.key));
    if (first >= deadline) return nothing;
    if (first - now > RATE_REFILL_MS) return { ...nothing, nextAt: first - RATE_REFILL_MS };
    // A slot right at the deadline would most likely be handed back unsent.
    const last = Math.min(now + RATE_HORIZON_MS, deadline - RATE_DEADLINE_MARGIN_MS);
    const slots = Math.min(quota, Math.floor((last - first) / spacingMs(rate)) + 1);
    if (slots < 1) return nothing;
    const waitMs = Math.ceil(first + (slots - 1) * spacingMs(rate) - now);
    return { quota: slots, waitMs, nextAt: Number.POSITIVE_INFINITY };
  }

  /**
   * Rows a claim must leave alone although they may look due: a call of this
   * instance still runs for them with its row already settled (written off
   * after its margin), or this cycle handed them back or wrote them due again.
   * Rows running in this cycle are claimed, so not due, unless their claim is
   * about to lapse while their outcome write is still tried again (a lock, a
   * killed backend): those are left out too, or this cycle would call again a
   * notification it may have delivered.
   */
  excluded(cycle: CycleState): string[] {
    const excluded = [...cycle.dueAgain];
    for (const id of this.callsInFlight.notificationIds()) {
      if (!cycle.running.has(id)) excluded.push(id);
    }
    const lapsingBy = performance.now() + LAPSING_CLAIM_MARGIN_MS;
    for (const [id, claimedUntil] of cycle.running) {
      if (claimedUntil <= lapsingBy) excluded.push(id);
    }
    return excluded;
  }

  /** Why a cycle with nothing running and nothing to claim ends. */
  idleReason(
    cycle: CycleState,
    channels: ResolvedChannels,
    drained: ReadonlySet<string>,
  ): CycleStopReason {
    if ([...channels.eligible.keys()].every((key) => drained.has(key))) return 'no-more-due';
    if (!this.options.drain && cycle.claimed >= this.options.batchSize) return 'batch-full';
    // The rest wait behind an open circuit.
    return 'no-more-due';
  }

  private claimMs(config: EligibleChannel['config']): number {
    return config.timeoutMs + this.options.settleMarginMs + CLAIM_WRITE_ALLOWANCE_MS;
  }
}
