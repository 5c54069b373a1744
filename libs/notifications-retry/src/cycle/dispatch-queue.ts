import type { ChannelConfig } from '../channels/channel-config';
import type { CircuitState } from '../circuit/circuit-state';
import type { DueCandidate } from '../persistence/notification.repository';
import type { ChannelPacer } from './channel-pacer';

export type DispatchDecision =
  | { readonly kind: 'item'; readonly candidate: DueCandidate }
  /** Nothing may start yet; `waitMs` is Infinity when only a completion can unblock a channel. */
  | { readonly kind: 'wait'; readonly waitMs: number }
  | { readonly kind: 'drained' };

/**
 * Hands out a cycle's candidates, oldest due first, within each channel's
 * limits: a channel at its max_concurrency, waiting on its rate, or whose
 * provider is probing a half-open circuit is passed over, so it never holds
 * back the others. Candidates of a provider whose circuit opened mid-cycle are
 * dropped unclaimed.
 */
export class DispatchQueue {
  /** Per channel, in due order; the next one is at `heads[channel]`. */
  private readonly queues = new Map<string, DueCandidate[]>();
  private readonly heads = new Map<string, number>();
  private readonly inFlightByChannel = new Map<string, number>();
  private readonly inFlightByProvider = new Map<string, number>();
  private droppedCount = 0;

  constructor(
    candidates: readonly DueCandidate[],
    private readonly channels: ReadonlyMap<string, ChannelConfig>,
    private readonly pacer: ChannelPacer,
    private readonly circuitState: (providerKey: string) => CircuitState,
  ) {
    for (const candidate of candidates) {
      const queue = this.queues.get(candidate.channel) ?? [];
      queue.push(candidate);
      this.queues.set(candidate.channel, queue);
      this.heads.set(candidate.channel, 0);
    }
  }

  /**
   * Appends a further claim (drain mode, claiming ahead); limits, pacing and
   * in-flight counts carry on. Candidates already handed out are let go, so a
   * long drain holds one batch, not every row of the cycle.
   */
  refill(candidates: readonly DueCandidate[]): void {
    for (const [channel, queue] of this.queues) {
      const head = this.heads.get(channel) ?? 0;
      if (head > 0) {
        queue.splice(0, head);
        this.heads.set(channel, 0);
      }
    }
    for (const candidate of candidates) {
      const queue = this.queues.get(candidate.channel) ?? [];
      queue.push(candidate);
      this.queues.set(candidate.channel, queue);
      if (!this.heads.has(candidate.channel)) this.heads.set(candidate.channel, 0);
    }
  }

  /** Candidates left out because their provider's circuit opened during the cycle. */
  get dropped(): number {
    return this.droppedCount;
  }

  next(nowMs: number): DispatchDecision {
    let best: { channel: string; candidate: DueCandidate } | null = null;
    let waitMs = Number.POSITIVE_INFINITY;
    let remaining = false;

    for (const [channel, queue] of this.queues) {
      const config = this.channels.get(channel) as ChannelConfig;
      let head = this.heads.get(channel) ?? 0;
      if (head < queue.length && this.circuitState(config.providerKey) === 'open') {
        this.droppedCount += queue.length - head;
        head = queue.length;
        this.heads.set(channel, head);
      }
      if (head >= queue.length) continue;
      remaining = true;

      if (
        config.maxConcurrency !== null &&
        this.count(this.inFlightByChannel, channel) >= config.maxConcurrency
      )
        continue;
      if (
        this.circuitState(config.providerKey) === 'half-open' &&
        this.count(this.inFlightByProvider, config.providerKey) > 0
      ) {
        continue;
      }
      const paced = this.pacer.waitMs(channel, config.rateLimitPerSec, nowMs);
      if (paced > 0) {
        waitMs = Math.min(waitMs, paced);
        continue;
      }
      const candidate = queue[head];
      if (!best || candidate.dueAt.getTime() < best.candidate.dueAt.getTime())
        best = { channel, candidate };
    }

    if (best) {
      const config = this.channels.get(best.channel) as ChannelConfig;
      this.heads.set(best.channel, (this.heads.get(best.channel) ?? 0) + 1);
      this.adjust(this.inFlightByChannel, best.channel, 1);
      this.adjust(this.inFlightByProvider, config.providerKey, 1);
      this.pacer.dispatched(best.channel, config.rateLimitPerSec, nowMs);
      return { kind: 'item', candidate: best.candidate };
    }
    return remaining ? { kind: 'wait', waitMs } : { kind: 'drained' };
  }

  /** The candidate handed out has finished its unit of work. */
  done(candidate: DueCandidate): void {
    const config = this.channels.get(candidate.channel) as ChannelConfig;
    this.adjust(this.inFlightByChannel, candidate.channel, -1);
    this.adjust(this.inFlightByProvider, config.providerKey, -1);
  }

  private count(map: Map<string, number>, key: string): number {
    return map.get(key) ?? 0;
  }

  private adjust(map: Map<string, number>, key: string, delta: number): void {
    map.set(key, this.count(map, key) + delta);
  }
}
