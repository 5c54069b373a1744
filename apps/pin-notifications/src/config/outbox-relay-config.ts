import { InvalidEnvironmentVariableError } from './invalid-environment-variable.error';

/** The relay's configuration from the environment: on with the NATS publisher when NATS_URL is set. */
export interface OutboxRelayConfig {
  /** Null: NATS_URL is not set, the relay is off and events stay in notification_outbox. */
  readonly nats: {
    readonly servers: readonly string[];
    readonly subjectPrefix: string | undefined;
    readonly stream: string | undefined;
    /** NATS_CREATE_STREAM: create `stream` at start when nothing captures the subject. Default false. */
    readonly createStream?: boolean;
  } | null;
  readonly retentionDays: number;
}

export const DEFAULT_OUTBOX_RETENTION_DAYS = 7;

const SUBJECT_PREFIX = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const STREAM_NAME = /^[A-Za-z0-9_-]+$/;

/**
 * NATS_URL (one or more nats:// or tls:// URLs, comma-separated), NATS_SUBJECT_PREFIX,
 * NATS_STREAM, OUTBOX_RETENTION_DAYS. A password in NATS_URL is never shown.
 */
export function parseOutboxRelayConfig(
  read: (name: string) => string | undefined,
): OutboxRelayConfig {
  const retention = read('OUTBOX_RETENTION_DAYS');
  const retentionDays =
    retention === undefined
      ? DEFAULT_OUTBOX_RETENTION_DAYS
      : Number(/^\d+$/.test(retention) ? retention : Number.NaN);
  if (!Number.isSafeInteger(retentionDays) || retentionDays < 1 || retentionDays > 3_650) {
    throw new InvalidEnvironmentVariableError(
      'OUTBOX_RETENTION_DAYS',
      JSON.stringify(retention),
      'must be a number of days from 1 to 3650 (published outbox rows older than that are deleted)',
    );
  }
  const url = read('NATS_URL');
  const subjectPrefix = read('NATS_SUBJECT_PREFIX');
  const stream = read('NATS_STREAM');
  const createStreamValue = read('NATS_CREATE_STREAM');
  if (url === undefined) {
    for (const [name, value] of [
      ['NATS_SUBJECT_PREFIX', subjectPrefix],
      ['NATS_STREAM', stream],
      ['NATS_CREATE_STREAM', createStreamValue],
    ] as const) {
      if (value !== undefined) {
        throw new InvalidEnvironmentVariableError(
          name,
          JSON.stringify(value),
          'is set but NATS_URL is not: set NATS_URL to turn the outbox relay on, or unset it',
        );
      }
    }
    return { nats: null, retentionDays };
  }
  const servers = url
    .split(',')
    .map((server) => server.trim())
    .filter(Boolean);
  for (const server of servers) checkServer(server);
  if (servers.length === 0) checkServer(url);
  if (subjectPrefix !== undefined && !SUBJECT_PREFIX.test(subjectPrefix)) {
    throw new InvalidEnvironmentVariableError(
      'NATS_SUBJECT_PREFIX',
      JSON.stringify(subjectPrefix),
      'must be dot-separated tokens of letters, digits, "_" and "-" (no wildcards, spaces or empty tokens), e.g. "pin"',
    );
  }
  if (stream !== undefined && !STREAM_NAME.test(stream)) {
    throw new InvalidEnvironmentVariableError(
      'NATS_STREAM',
      JSON.stringify(stream),
      'must be a JetStream stream name (letters, digits, "_" and "-")',
    );
  }
  const createStream = parseFlag('NATS_CREATE_STREAM', createStreamValue) ?? false;
  if (createStream && stream === undefined) {
    throw new InvalidEnvironmentVariableError(
      'NATS_CREATE_STREAM',
      JSON.stringify(createStreamValue),
      'needs NATS_STREAM: the name of the stream to create (e.g. PIN_NOTIFICATIONS)',
    );
  }
  return { nats: { servers, subjectPrefix, stream, createStream }, retentionDays };
}

function parseFlag(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  if (lower === 'true' || lower === '1') return true;
  if (lower === 'false' || lower === '0') return false;
  throw new InvalidEnvironmentVariableError(
    name,
    JSON.stringify(value),
    'must be true or false (or 1 or 0)',
  );
}

function checkServer(server: string): void {
  let parsed: URL;
  try {
    parsed = new URL(server);
  } catch {
    throw new InvalidEnvironmentVariableError(
      'NATS_URL',
      'a value that is not a URL (not shown, it may contain a password)',
      'must be nats://host:port or tls://host:port (several separated by commas)',
    );
  }
  if (parsed.password) parsed.password = '***';
  if (
    (parsed.protocol !== 'nats:' && parsed.protocol !== 'tls:') ||
    parsed.hostname === '' ||
    (parsed.pathname !== '' && parsed.pathname !== '/')
  ) {
    throw new InvalidEnvironmentVariableError(
      'NATS_URL',
      JSON.stringify(parsed.toString()),
      'must be nats://host:port or tls://host:port (several separated by commas)',
    );
  }
}
