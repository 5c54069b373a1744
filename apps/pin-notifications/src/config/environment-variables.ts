/** Who reads a variable: parseAppConfig (the app and the ops CLI), or another part named in `readAt`. */
export type EnvironmentVariableReader = 'app-config' | 'ops-cli' | 'node' | 'docker-compose';

export interface EnvironmentVariable {
  readonly name: string;
  /** As docs/configuration.md shows it; null: unset (what that means is in `meaning`). */
  readonly default: string | null;
  readonly meaning: string;
  readonly readBy: EnvironmentVariableReader;
  /** For a reader other than app-config: the file that reads it. */
  readonly readAt?: string;
  /** What in `readAt` reads it, when not its name (e.g. `tmpdir()`). */
  readonly readAs?: string;
}

/**
 * Every environment variable the host app reads: docs/configuration.md's table is checked against
 * this list both ways, parseAppConfig reads no name missing from it, and names under the app's
 * prefixes that are not here are warned about at start (a typo is otherwise silently ignored).
 */
export const ENVIRONMENT_VARIABLES: readonly EnvironmentVariable[] = [
  {
    name: 'DATABASE_URL',
    default: null,
    meaning:
      'postgres:// URL of the database (migrations run at start). Unset: a throw-away embedded PostgreSQL (refused when NODE_ENV=production)',
    readBy: 'app-config',
  },
  {
    name: 'PORT',
    default: '3000',
    meaning: 'HTTP port (/health, /metrics, the admin page)',
    readBy: 'app-config',
  },
  {
    name: 'NODE_ENV',
    default: null,
    meaning: '`production` (the Dockerfile sets it) makes DATABASE_URL required',
    readBy: 'app-config',
  },
  {
    name: 'LOG_LEVEL',
    default: 'info',
    meaning: 'fatal, error, warn, info, debug, trace or silent',
    readBy: 'app-config',
  },
  {
    name: 'RETRY_WORKER_ENABLED',
    default: 'true',
    meaning: 'run retry cycles on the schedule in this instance (true/false, 1/0)',
    readBy: 'app-config',
  },
  {
    name: 'RETRY_CRON',
    default: '0 * * * * *',
    meaning: 'the cycle schedule: six-field cron with seconds, UTC',
    readBy: 'app-config',
  },
  {
    name: 'RETRY_BATCH_SIZE',
    default: '200',
    meaning: 'rows claimed per cycle at most, 1 to 10000',
    readBy: 'app-config',
  },
  {
    name: 'RETRY_CONCURRENCY',
    default: '200',
    meaning: "provider calls in flight at once, 1 to 10000 (the library's default)",
    readBy: 'app-config',
  },
  {
    name: 'STUB_PROVIDERS',
    default: null,
    meaning:
      'comma-separated channels (email, sms, push) whose built-in stub adapter is on. The demo data turns push on by itself',
    readBy: 'app-config',
  },
  {
    name: 'SEED_DEMO_DATA',
    default: null,
    meaning:
      'seed the demo channels and notifications at start (idempotent). Unset: only into the embedded database',
    readBy: 'app-config',
  },
  {
    name: 'ADMIN_TOKEN',
    default: null,
    meaning: 'turns the admin page and JSON API on; at least 24 characters. Unset: off',
    readBy: 'app-config',
  },
  {
    name: 'NATS_URL',
    default: null,
    meaning:
      'nats:// or tls:// URL(s), comma-separated, credentials allowed: turns the outbox relay on with the NATS JetStream publisher. Unset: relay off, events stay in notification_outbox',
    readBy: 'app-config',
  },
  {
    name: 'NATS_SUBJECT_PREFIX',
    default: null,
    meaning:
      'put before the topic: `pin` publishes on pin.pin.notifications.dispatched.v1. Needs NATS_URL',
    readBy: 'app-config',
  },
  {
    name: 'NATS_STREAM',
    default: null,
    meaning:
      'the JetStream stream that must capture the subject (checked at start). Unset: whichever does. Needs NATS_URL',
    readBy: 'app-config',
  },
  {
    name: 'NATS_CREATE_STREAM',
    default: 'false',
    meaning:
      "create NATS_STREAM at start when no stream captures the subject, with a duplicate window covering the relay's republishing. Needs NATS_URL and NATS_STREAM",
    readBy: 'app-config',
  },
  {
    name: 'OUTBOX_RETENTION_DAYS',
    default: '7',
    meaning: 'published outbox rows older than this are deleted, 1 to 3650 (where the relay runs)',
    readBy: 'app-config',
  },
  {
    name: 'USER',
    default: null,
    meaning: 'the operator the ops CLI records in the audit log (unset: the OS account name)',
    readBy: 'ops-cli',
    readAt: 'apps/pin-notifications/src/ops/run-pin-ops.ts',
    readAs: 'settings.env.USER',
  },
  {
    name: 'TMPDIR',
    default: '/tmp',
    meaning: "where the embedded PostgreSQL keeps its throw-away data (Node's os.tmpdir())",
    readBy: 'node',
    readAt: 'src/database/embedded-postgres.ts',
    readAs: 'tmpdir()',
  },
  {
    name: 'POSTGRES_PORT',
    default: '5432',
    meaning:
      'the host port docker-compose.yml publishes PostgreSQL on (the embedded database takes a free port)',
    readBy: 'docker-compose',
    readAt: 'docker-compose.yml',
  },
];

/** Prefixes of the app's own variables: an unknown name under them is most likely a typo. */
export const OWN_PREFIXES = ['RETRY_', 'NATS_', 'OUTBOX_'] as const;
