import { Inject, Injectable } from '@nestjs/common';
import { ChannelCatalog, readCatalogChannels } from '../channels/channel-catalog';
import { ProviderCircuitBreakers } from '../circuit/provider-circuit-breakers';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { PausedChannels } from '../channels/paused-channels';
import { ProviderAdapterRegistry } from '../providers/provider-adapter.registry';
import { leaseAllowanceMs } from '../options/lease-allowance';
import type { ChannelExclusionReason } from '../vocabulary/cycle-report';
import type { EligibleChannel } from './cycle-state';

/** The channels of one cycle: those it claims from, and those it leaves out and why. */
export interface ResolvedChannels {
  readonly eligible: ReadonlyMap<string, EligibleChannel>;
  readonly excluded: ReadonlyMap<string, ChannelExclusionReason>;
  /** Channels an operator paused (`PausedChannels`), sorted: for /health. */
  readonly paused: readonly string[];
}

/**
 * Which channels take part in a cycle (DESIGN §3.2), on one read of the
 * catalog and one of the operators' pauses: disabled or paused channels,
 * channels without a valid configuration or an adapter, providers switched
 * off or with an open circuit, and timeouts the lease cannot hold are left
 * out; their rows are never read by the claim.
 */
@Injectable()
export class ChannelResolver {
  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly catalog: ChannelCatalog,
    private readonly adapters: ProviderAdapterRegistry,
    private readonly circuits: ProviderCircuitBreakers,
    private readonly pauses: PausedChannels,
  ) {}

  async resolve(): Promise<ResolvedChannels> {
    const eligible = new Map<string, EligibleChannel>();
    const excluded = new Map<string, ChannelExclusionReason>();
    const maxTimeoutMs = leaseAllowanceMs(this.options);
    const catalog = await readCatalogChannels(this.catalog);
    const paused = await this.pauses.keys();
    for (const config of catalog.channels) {
      if (eligible.has(config.key) || excluded.has(config.key)) continue;
      const found = this.adapters.lookup(config.providerKey);
      if (!config.isEnabled) excluded.set(config.key, 'disabled');
      else if (found.kind === 'missing') excluded.set(config.key, 'no-provider-adapter');
      else if (found.kind === 'disabled') excluded.set(config.key, 'provider-disabled');
      else if (paused.has(config.key)) excluded.set(config.key, 'paused');
      else if (this.circuits.state(config.providerKey) === 'open')
        excluded.set(config.key, 'circuit-open');
      else if (config.timeoutMs > maxTimeoutMs) excluded.set(config.key, 'timeout-exceeds-lease');
      else eligible.set(config.key, { config, adapter: found.adapter });
    }
    // An entry the catalog left out as invalid is a channel without a valid configuration.
    for (const key of catalog.invalid) {
      if (!eligible.has(key) && !excluded.has(key)) excluded.set(key, 'not-configured');
    }
    return { eligible, excluded, paused: [...paused].sort() };
  }
}
