import { DistributedLockEntity } from './distributed-lock.entity';
import { CreateNotificationsRetrySchema1796083200000 } from './migrations/1796083200000-create-notifications-retry-schema';
import { OutboxRelayClaims1796169600000 } from './migrations/1796169600000-outbox-relay-claims';
import { NotificationChannelEntity } from './notification-channel.entity';
import { NotificationOutboxEntity } from './notification-outbox.entity';
import { NotificationEntity } from './notification.entity';

/** Register these in the host's TypeORM `entities`. */
export const notificationsRetryEntities = [
  NotificationEntity,
  NotificationChannelEntity,
  NotificationOutboxEntity,
  DistributedLockEntity,
];

/** Register these in the host's TypeORM `migrations`, in this order. */
export const notificationsRetryMigrations = [
  CreateNotificationsRetrySchema1796083200000,
  OutboxRelayClaims1796169600000,
];
