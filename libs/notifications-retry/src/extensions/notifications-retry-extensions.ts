import type { AlertSink } from '../alerts/alert-sink';
import type { ChannelCatalog } from '../channels/channel-catalog';
import type { Clock } from '../clock/clock';
import type { RandomSource } from '../clock/random-source';
import type { DistributedLock } from '../locking/distributed-lock';
import type { OutboxPublisher } from '../outbox/outbox-publisher';
import type { NotificationsRetryExtensionProvider } from './extension-provider';

/** Replacements for the module's extension points, each in any Nest provider form. */
export interface NotificationsRetryExtensions {
  channelCatalog?: NotificationsRetryExtensionProvider<ChannelCatalog>;
  distributedLock?: NotificationsRetryExtensionProvider<DistributedLock>;
  clock?: NotificationsRetryExtensionProvider<Clock>;
  randomSource?: NotificationsRetryExtensionProvider<RandomSource>;
  alertSink?: NotificationsRetryExtensionProvider<AlertSink>;
  /** Where the outbox relay publishes (`outboxRelay.enabled` needs one); no default. */
  outboxPublisher?: NotificationsRetryExtensionProvider<OutboxPublisher>;
}
