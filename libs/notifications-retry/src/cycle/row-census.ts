import { Injectable } from '@nestjs/common';
import { ProviderCircuitBreakers } from '../circuit/provider-circuit-breakers';
import { RetryMetrics } from '../observability/retry-metrics';
import { channelExclusions } from './channel-exclusions';
import type { ResolvedChannels } from './channel-resolver';
import { CycleReporter } from './cycle-reporter';
import type { CycleState } from './cycle-state';
import { RetryWorkerState } from './retry-worker-state';
import { RowCounts, type ChannelRowCount } from './row-counts';

/**
 * The counts a cycle reports after its work, off the claim path: rows
 * waiting on the channels left out, and the failed backlog. A count that
 * fails leaves the gauges and the worker's state as they were (DESIGN §3.2).
 */
@Injectable()
export class RowCensus {
  constructor(
    private readonly counts: RowCounts,
    private readonly reporter: CycleReporter,
    private readonly metrics: RetryMetrics,
    private readonly circuits: ProviderCircuitBreakers,
    private readonly state: RetryWorkerState,
  ) {}

  async take(cycle: CycleState, channels: ResolvedChannels): Promise<void> {
    const waiting = await this.counts
      .waiting([...channels.eligible.keys()], cycle.now, cycle.connectBy)
      .catch((error: unknown): ChannelRowCount[] | null => {
        this.reporter.countFailed(cycle, 'waiting-rows', error);
        return null;
      });
    const exclusions = channelExclusions(channels.excluded, waiting ?? []);
    // The channels that deliver first: with more channels than label values, they keep their own
    // series and the excluded ones are the ones summed under _other.
    for (const { config } of channels.eligible.values()) {
      this.metrics.channelActive(
        config.key,
        config.providerKey,
        this.circuits.state(config.providerKey),
      );
    }
    if (waiting) this.reporter.exclusions(cycle, exclusions);
    this.state.misconfiguredChannels = exclusions.misconfigured;
    this.state.excludedChannels = exclusions.waiting;

    const backlog = await this.counts.failedBacklog(cycle.connectBy).catch((error: unknown) => {
      this.reporter.countFailed(cycle, 'failed-backlog', error);
      return null;
    });
    if (backlog) {
      this.metrics.backlog(backlog);
      this.state.failedBacklog = backlog.reduce((sum, b) => sum + b.rows, 0);
    }
  }
}
