import type { OpsHostFactory } from './ops-host';
import type { OpsIo } from './ops-io';

/** `NotificationsRetryOpsModule.forRoot()`. */
export interface NotificationsRetryOpsOptions {
  /** The host's module, built for the CLI (see `OpsHostFactory`). */
  readonly host: OpsHostFactory;
  /** Where results and errors go; default the process's stdout and stderr. */
  readonly io?: OpsIo;
  /** Who the audit records when `--actor` is not given; default `cli:$USER@host`. */
  readonly defaultActor?: () => string;
}

export const NOTIFICATIONS_RETRY_OPS_OPTIONS = Symbol('NOTIFICATIONS_RETRY_OPS_OPTIONS');
