import { Injectable, Logger } from '@nestjs/common';
import type { TerminalFailureAlert } from './terminal-failure-alert';

/**
 * Where terminal failures go for manual review. Called after the row's
 * outcome was written; a sink that throws is logged, never retried.
 */
export abstract class AlertSink {
  abstract terminalFailure(alert: TerminalFailureAlert): Promise<void> | void;
}

/** Default: an error-level log line that log-based alerting can match. */
@Injectable()
export class LoggingAlertSink extends AlertSink {
  private readonly logger = new Logger('NotificationsRetryAlert');

  terminalFailure(alert: TerminalFailureAlert): void {
    this.logger.error({
      msg: 'notification-terminal-failure-alert',
      event: 'notification-terminal-failure-alert',
      ...alert,
    });
  }
}
