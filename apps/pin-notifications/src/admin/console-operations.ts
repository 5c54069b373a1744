import { Injectable } from '@nestjs/common';
import {
  NotificationBrowser,
  NotificationDiscard,
  OperatorAuditLog,
  OutboxOperations,
  RecentCycles,
} from '@pin/notifications-retry';

/** The library's operations API the console reads and acts through, in one place for both controllers. */
@Injectable()
export class ConsoleOperations {
  constructor(
    readonly browser: NotificationBrowser,
    readonly discard: NotificationDiscard,
    readonly outbox: OutboxOperations,
    readonly audit: OperatorAuditLog,
    readonly cycles: RecentCycles,
  ) {}
}
