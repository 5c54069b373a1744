import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelResolver } from '../cycle/channel-resolver';
import { ProviderCircuitBreakers } from '../circuit/provider-circuit-breakers';
import type { CircuitState } from '../circuit/circuit-state';
import type { ChannelExclusionReason } from '../vocabulary/cycle-report';
import { ProviderCallsInFlight } from '../cycle/provider-calls-in-flight';
import { RetryWorkerHealthService } from '../health/retry-worker-health.service';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { RetryWorkerHealth } from '../health/retry-worker-health';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { SqlRunner } from '../persistence/sql-runner';
import { ChannelPauses, type ListedChannelPause } from './channel-pauses';
import { LeaseRelease, type LeaseView } from './lease-release';
import { compileChannelRowCounts } from './sql/channel-row-counts.sql';

/** One channel's rows, by the database clock. */
export interface ChannelRowCounts {
  readonly channel: string;
  readonly backlog: number;
  readonly due: number;
  readonly deferred: number;
  readonly terminal: number;
  readonly liveClaims: number;
}

export interface StatusExcludedChannel {
  readonly channel: string;
  readonly reason: ChannelExclusionReason;
}

/** What an on-call engineer looks at first. No personal data. */
export interface OperationsStatusReport {
  /** The worker's lease; null when no cycle ever ran. */
  readonly lease: LeaseView | null;
  /**
   * The last cycle as the lease shows it, whichever instance ran it: a cycle
   * takes the lease when it starts and expires it when it ends.
   */
  readonly lastCycle: {
    readonly startedAt: Date;
    readonly endedAt: Date | null;
    readonly running: boolean;
    readonly owner: string;
  } | null;
  readonly channels: readonly ChannelRowCounts[];
  readonly totals: Omit<ChannelRowCounts, 'channel'>;
  /** Channels the next cycle leaves out and why, as far as this process can tell (circuits are per instance). */
  readonly excludedChannels: readonly StatusExcludedChannel[];
  readonly pausedChannels: readonly ListedChannelPause[];
  readonly circuits: Readonly<Record<string, CircuitState>>;
  /** Provider calls this process has in flight (the admin page runs inside a worker; the CLI has none). */
  readonly callsInFlight: number;
  /** The worker's health as this process judges it (the /health verdict), with its own last tick. */
  readonly thisInstance: RetryWorkerHealth & { readonly instanceId: string };
}

@Injectable()
export class OperationsStatus {
  private readonly rowCounts: ReturnType<typeof compileChannelRowCounts>;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly channelResolver: ChannelResolver,
    private readonly circuits: ProviderCircuitBreakers,
    private readonly callsInFlight: ProviderCallsInFlight,
    private readonly workerHealth: RetryWorkerHealthService,
    private readonly pauses: ChannelPauses,
    private readonly leases: LeaseRelease,
    private readonly sql: SqlRunner,
  ) {
    this.rowCounts = compileChannelRowCounts(dataSource);
  }

  async status(): Promise<OperationsStatusReport> {
    const [lease, counts, pauses, resolved, thisInstance] = await Promise.all([
      this.leases.read(this.options.lockKey),
      this.sql.run<ChannelRowCounts>(this.rowCounts, this.rowCounts.values({})),
      this.pauses.list(),
      // The cycle's own resolution: the same channels left out, for the same reasons.
      this.channelResolver.resolve(),
      this.workerHealth.health(),
    ]);
    const channels = counts.map((row) => ({
      channel: row.channel,
      backlog: row.backlog,
      due: row.due,
      deferred: row.deferred,
      terminal: row.terminal,
      liveClaims: row.liveClaims,
    }));
    const totals = channels.reduce(
      (sum, c) => ({
        backlog: sum.backlog + c.backlog,
        due: sum.due + c.due,
        deferred: sum.deferred + c.deferred,
        terminal: sum.terminal + c.terminal,
        liveClaims: sum.liveClaims + c.liveClaims,
      }),
      { backlog: 0, due: 0, deferred: 0, terminal: 0, liveClaims: 0 },
    );

    const excluded = new Map<string, ChannelExclusionReason>(resolved.excluded);
    const known = new Set([...resolved.eligible.keys(), ...resolved.excluded.keys()]);
    for (const { channel } of channels) {
      if (!known.has(channel) && !excluded.has(channel)) excluded.set(channel, 'not-configured');
    }
    // A cycle of this process may have seen more (a lease too short for a channel's timeout).
    for (const { channel, reason } of thisInstance.misconfiguredChannels) {
      if (!excluded.has(channel)) excluded.set(channel, reason);
    }

    const running = lease !== null && lease.live;
    return {
      lease,
      lastCycle: lease
        ? {
            startedAt: lease.acquiredAt,
            endedAt: running ? null : lease.expiresAt,
            running,
            owner: lease.owner,
          }
        : null,
      channels,
      totals,
      excludedChannels: [...excluded]
        .map(([channel, reason]) => ({ channel, reason }))
        .sort((a, b) => (a.channel < b.channel ? -1 : a.channel > b.channel ? 1 : 0)),
      pausedChannels: pauses,
      circuits: Object.fromEntries(this.circuits.states()),
      callsInFlight: this.callsInFlight.size,
      thisInstance: { ...thisInstance, instanceId: this.options.instanceId },
    };
  }
}
