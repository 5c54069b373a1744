import type { ChannelConfig } from '../channels/channel-config';
import type { CircuitState } from '../circuit/circuit-state';
import type { ChannelPacer } from './channel-pacer';

/** What the queue needs of a row. */
export interface QueuedRow {
  readonly channel: string;
  readonly dueAt: Date;
}

export type DispatchDecision<Row> =
  | { readonly kind: 'row'; readonly row: Row }
  /** Nothing may start yet; `waitMs` is Infinity when only a finished call can unblock a channel. */
  | { readonly kind: 'wait'; readonly waitMs: number }
  | { readonly kind: 'empty' };

/**
 * Hands out a cycle's claimed rows, oldest due first, within each channel's
 * limits: a channel at its max_concurrency, waiting on its rate, or whose
 * provider is probing a half-open circuit is passed over, so it never holds
 * back the others. Rows of a provider whose circuit opened are taken out
 * (`takeDropped`) to be handed back unclaimed.
 */
export class DispatchQueue<Row extends QueuedRow> {
  /** Per channel, in due order. */
  private readonly queues = new Map<string, Row[]>();
  private readonly inFlightByChannel = new Map<string, number>();
  private readonly inFlightByProvider = new Map<string, number>();
  private dropped: Row[] = [];
  private queued = 0;

  constructor(
    private readonly channels: ReadonlyMap<string, ChannelConfig>,
    private readonly pacer: ChannelPacer,
    private readonly circuitState: (providerKey: string) => CircuitState,
  ) {}

  /** Rows waiting to start. */
  get size(): number {
    return this.queued;
  }

  /** Rows of the channel waiting to start or started and not done. */
  held(channel: string): number {
    return (this.queues.get(channel)?.length ?? 0) + (this.inFlightByChannel.get(channel) ?? 0);
  }

  /** Rows of the channel waiting to start. */
  waiting(channel: string): number {
    return this.queues.get(channel)?.length ?? 0;
  }

  /** Calls started and not done for the provider. */
  inFlightFor(providerKey: string): number {
    return this.inFlightByProvider.get(providerKey) ?? 0;
  }

  add(rows: readonly Row[]): void {
    for (const row of rows) {
      const queue = this.queues.get(row.channel) ?? [];
      queue.push(row);
      this.queues.set(row.channel, queue);
    }
    this.queued += rows.length;
  }

  /** Every row still waiting, taken out (the cycle stops: they are handed back). */
  takeAll(): Row[] {
    const rows = [...this.queues.values()].flat();
    this.queues.clear();
    this.queued = 0;
    return [...this.takeDropped(), ...rows];
  }

  /** Rows taken out because their provider's circuit opened. */
  takeDropped(): Row[] {
    const dropped = this.dropped;
    this.dropped = [];
    return dropped;
  }

  next(nowMs: number): DispatchDecision<Row> {
    let best: Row | null = null;
    let waitMs = Number.POSITIVE_INFINITY;

    for (const [channel, queue] of this.queues) {
      if (queue.length === 0) continue;
      const config = this.channels.get(channel) as ChannelConfig;
      const circuit = this.circuitState(config.providerKey);
      if (circuit === 'open') {
        this.dropped.push(...queue);
        this.queued -= queue.length;
        queue.length = 0;
        continue;
      }
      if (
        config.maxConcurrency !== null &&
        (this.inFlightByChannel.get(channel) ?? 0) >= config.maxConcurrency
      )
        continue;
      if (circuit === 'half-open' && this.inFlightFor(config.providerKey) > 0) continue;
      const paced = this.pacer.waitMs(channel, config.rateLimitPerSec, nowMs);
      if (paced > 0) {
        waitMs = Math.min(waitMs, paced);
        continue;
      }
      if (!best || queue[0].dueAt.getTime() < best.dueAt.getTime()) best = queue[0];
    }

    if (best) {
      const config = this.channels.get(best.channel) as ChannelConfig;
      (this.queues.get(best.channel) as Row[]).shift();
      this.queued--;
      this.adjust(this.inFlightByChannel, best.channel, 1);
      this.adjust(this.inFlightByProvider, config.providerKey, 1);
      this.pacer.dispatched(best.channel, config.rateLimitPerSec, nowMs);
      return { kind: 'row', row: best };
    }
    return this.queued > 0 ? { kind: 'wait', waitMs } : { kind: 'empty' };
  }

  /** A row handed out has finished (written, handed back or failed). */
  done(row: Row): void {
    const config = this.channels.get(row.channel) as ChannelConfig;
    this.adjust(this.inFlightByChannel, row.channel, -1);
    this.adjust(this.inFlightByProvider, config.providerKey, -1);
  }

  private adjust(map: Map<string, number>, key: string, delta: number): void {
    map.set(key, (map.get(key) ?? 0) + delta);
  }
}
