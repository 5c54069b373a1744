import { Inject, Injectable, Logger } from '@nestjs/common';
import { ChannelCatalog, readCatalogChannels } from '../channels/channel-catalog';
import { MissingProviderAdapterError } from '../errors/missing-provider-adapter.error';
import { leaseAllowanceMs } from '../options/lease-allowance';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import { ProviderAdapterRegistry } from '../providers/provider-adapter.registry';

/**
 * What the scheduler checks before it starts, on one read of the catalog.
 * An enabled channel whose provider key no adapter serves is a deployment
 * mistake (a missing module, a typo in the table): start-up fails instead of
 * those rows silently waiting. A registered adapter whose feature flag is off
 * is fine. An enabled channel whose timeout (with the settle margin) cannot
 * fit the lease would be left out of every cycle: a warning names it.
 */
@Injectable()
export class CatalogStartCheck {
  private readonly logger = new Logger('NotificationsRetryCycle');

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly catalog: ChannelCatalog,
    private readonly adapters: ProviderAdapterRegistry,
  ) {}

  async run(): Promise<void> {
    const enabled = (await readCatalogChannels(this.catalog)).channels.filter((c) => c.isEnabled);
    const missing = enabled
      .filter((channel) => this.adapters.lookup(channel.providerKey).kind === 'missing')
      .map((channel) => ({ channel: channel.key, providerKey: channel.providerKey }));
    if (missing.length > 0) throw new MissingProviderAdapterError(missing, this.adapters.keys());
    const allowanceMs = leaseAllowanceMs(this.options);
    for (const channel of enabled.filter((c) => c.timeoutMs > allowanceMs)) {
      this.logger.warn({
        msg: 'channel-timeout-exceeds-lease',
        event: 'channel-timeout-exceeds-lease',
        channel: channel.key,
        timeoutMs: channel.timeoutMs,
        allowanceMs,
        note: 'timeout_ms + settleMarginMs must fit lockTtlMs - maxCycleDurationMs - 5 s: the channel is left out of every cycle until its timeout is lowered or the lease raised',
      });
    }
  }
}
