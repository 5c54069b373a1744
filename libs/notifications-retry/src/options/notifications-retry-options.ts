/** What a host passes to `NotificationsRetryModule.forRoot()` / `forRootAsync()`. */
export interface NotificationsRetryModuleOptions {
  /** Run cycles on the schedule. `runCycle()` works either way. Default true. */
  enabled?: boolean;
  /** Six-field cron expression, evaluated in UTC. Default every minute at second 0. */
  cron?: string;
  /** Rows claimed per cycle at most. Default 200. */
  batchSize?: number;
  /** Rows in flight at once; each holds a pooled connection. Default 4. */
  concurrency?: number;
  /** Default `notifications:retry-worker`. */
  lockKey?: string;
  /** Lease time to live; must exceed `maxCycleDurationMs`. Default 90 000. */
  lockTtlMs?: number;
  /** No row is claimed after this long into a cycle. Default 45 000. */
  maxCycleDurationMs?: number;
  /** Lease owner name of this instance. Default host name, pid and a random suffix. */
  instanceId?: string;
  /** Feature flags of the built-in stub adapters for external channels. All off by default. */
  stubProviders?: { email?: boolean; sms?: boolean; push?: boolean };
}

/** The options after defaults and validation. */
export interface ResolvedNotificationsRetryOptions {
  readonly enabled: boolean;
  readonly cron: string;
  readonly batchSize: number;
  readonly concurrency: number;
  readonly lockKey: string;
  readonly lockTtlMs: number;
  readonly maxCycleDurationMs: number;
  readonly instanceId: string;
  readonly stubProviders: {
    readonly email: boolean;
    readonly sms: boolean;
    readonly push: boolean;
  };
}
