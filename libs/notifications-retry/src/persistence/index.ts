import { DistributedLockEntity } from './distributed-lock.entity';
import { CreateNotificationsRetrySchema1796083200000 } from './migrations/1796083200000-create-notifications-retry-schema';
import { OutboxRelayClaims1796169700000 } from './migrations/1796169700000-outbox-relay-claims';
import { EventSequenceAndLastCycle1796256000000 } from './migrations/1796256000000-event-sequence-and-last-cycle';
import { AttemptHistoryAndCycleLog1796342400000 } from './migrations/1796342400000-attempt-history-and-cycle-log';
import { OperatorActionRows1796428800000 } from './migrations/1796428800000-operator-action-rows';
import { NotificationChannelEntity } from './notification-channel.entity';
import { CreateOperationsTables1796169600000 } from './migrations/1796169600000-create-operations-tables';
import { NotificationChannelPauseEntity } from './notification-channel-pause.entity';
import { NotificationOperatorActionEntity } from './notification-operator-action.entity';
import { NotificationRedrivenRowEntity } from './notification-redriven-row.entity';
import { NotificationOperatorActionRowEntity } from './notification-operator-action-row.entity';
import { NotificationOutboxEntity } from './notification-outbox.entity';
import { NotificationEntity } from './notification.entity';
import { NotificationRetryCycleEntity } from './notification-retry-cycle.entity';

/** Register these in the host's TypeORM `entities`. */
export const notificationsRetryEntities = [
  NotificationEntity,
  NotificationChannelEntity,
  NotificationOutboxEntity,
  DistributedLockEntity,
  NotificationChannelPauseEntity,
  NotificationOperatorActionEntity,
  NotificationRedrivenRowEntity,
  NotificationRetryCycleEntity,
  NotificationOperatorActionRowEntity,
];

/** Register these in the host's TypeORM `migrations`, in this order. */
export const notificationsRetryMigrations = [
  CreateNotificationsRetrySchema1796083200000,
  CreateOperationsTables1796169600000,
  OutboxRelayClaims1796169700000,
  EventSequenceAndLastCycle1796256000000,
  AttemptHistoryAndCycleLog1796342400000,
  OperatorActionRows1796428800000,
];
