import type pino from 'pino';
import type { NotificationsRetryOpsOverrides } from '@pin/notifications-retry/ops-cli';
import type { AdminModuleOptions } from './admin/admin-settings';
import type { RetryWorkerOptions } from './config/app-config';
import type { OutboxRelayConfig } from './config/outbox-relay-config';

/** What `AppModule.forRoot()` is built from; `main.ts` derives it from the environment. */
export interface AppModuleOptions {
  readonly databaseUrl: string;
  readonly retryWorker: RetryWorkerOptions;
  /** The outbox relay: NATS (null: off) and how long published rows are kept. Default off. */
  readonly outboxRelay?: OutboxRelayConfig;
  /** Seed the demo rows at start, register the demo provider and turn the push stub on. */
  readonly demo: boolean;
  /** Root logger; default JSON on stdout at level info. */
  readonly logger?: pino.Logger;
  /** The admin page and API: on with a token (ADMIN_TOKEN) or the host's AdminAccess provider; off otherwise. */
  readonly admin?: AdminModuleOptions;
  /**
   * Set when the ops CLI opens the app (`npm run ops`): the same adapters,
   * catalog and extensions, with these retry options applied last (no
   * schedule, no relay), and nothing else that a one-shot command must not
   * do: no HTTP modules, no admin, no migrations, no demo seeding, one connect
   * attempt that gives up after a few seconds.
   */
  readonly ops?: NotificationsRetryOpsOverrides;
}
