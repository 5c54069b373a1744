import { InvalidOutboxPublisherOptionsError } from '../../errors/invalid-outbox-publisher-options.error';
import { describeValue } from '../../errors/describe-value';
import { resolveOutboxRelayOptions } from '../../options/resolve-outbox-relay-options';
import {
  requiredDuplicateWindowMs,
  type DuplicateWindowInputs,
} from './jetstream-duplicate-window';

export const NATS_PUBLISHER = 'NatsJetStreamOutboxPublisher';

export interface ResolvedNatsPublisherOptions {
  readonly servers: readonly string[];
  readonly subjectPrefix: string | null;
  readonly stream: string | null;
  readonly name: string;
  readonly connectTimeoutMs: number;
  readonly ackTimeoutMs: number;
  readonly verifyAtStart: boolean;
  readonly createStream: boolean;
  /** The relay options the duplicate window is derived from, resolved. */
  readonly relay: DuplicateWindowInputs;
  /** False only when the relay options say it is off: then nothing is checked at start. */
  readonly relayEnabled: boolean;
  readonly requiredDuplicateWindowMs: number;
}

const KNOWN = new Set<string>([
  'servers',
  'subjectPrefix',
  'stream',
  'name',
  'connectTimeoutMs',
  'ackTimeoutMs',
  'verifyAtStart',
  'createStream',
  'outboxRelay',
]);

/** One subject token: no wildcards, whitespace or dots inside. */
const SUBJECT_TOKEN = /^[A-Za-z0-9_-]+$/;
/** JetStream stream names: no whitespace, dots, wildcards or path separators. */
const STREAM_NAME = /^[A-Za-z0-9_-]+$/;

export function resolveNatsPublisherOptions(raw: unknown): ResolvedNatsPublisherOptions {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw invalid('options', describeValue(raw), 'must be an object with at least servers');
  }
  const options = raw as Record<string, unknown>;
  for (const name of Object.keys(options)) {
    if (!KNOWN.has(name)) {
      throw invalid(name, describeValue(options[name]), 'is not a known option (a typo?)');
    }
  }
  const servers = serversOption(options.servers);
  const subjectPrefix = options.subjectPrefix;
  if (subjectPrefix !== undefined && !isSubjectPrefix(subjectPrefix)) {
    throw invalid(
      'subjectPrefix',
      describeValue(subjectPrefix),
      'must be dot-separated tokens of letters, digits, "_" and "-" (no wildcards, spaces or empty tokens), e.g. "pin" or "eu.pin"',
    );
  }
  const stream = options.stream;
  if (stream !== undefined && (typeof stream !== 'string' || !STREAM_NAME.test(stream))) {
    throw invalid(
      'stream',
      describeValue(stream),
      'must be a JetStream stream name (letters, digits, "_" and "-")',
    );
  }
  const name = options.name ?? 'pin-notifications-outbox';
  if (typeof name !== 'string' || name.trim() === '') {
    throw invalid('name', describeValue(name), 'must be a non-empty string');
  }
  const verifyAtStart = options.verifyAtStart ?? true;
  if (typeof verifyAtStart !== 'boolean') {
    throw invalid('verifyAtStart', describeValue(verifyAtStart), 'must be a boolean');
  }
  const createStream = options.createStream ?? false;
  if (typeof createStream !== 'boolean') {
    throw invalid('createStream', describeValue(createStream), 'must be a boolean');
  }
  if (createStream && stream === undefined) {
    throw invalid(
      'createStream',
      'true',
      'needs the stream option: the name of the stream to create',
    );
  }
  if (createStream && !verifyAtStart) {
    throw invalid(
      'createStream',
      'true',
      'needs verifyAtStart: the stream is created by the check at start',
    );
  }
  // Errors name outboxRelay.<option>, as the module's own check does.
  const relay = resolveOutboxRelayOptions(options.outboxRelay);
  const relayEnabled =
    (options.outboxRelay as { enabled?: unknown } | undefined)?.enabled !== false;
  return {
    servers,
    subjectPrefix: subjectPrefix ?? null,
    stream: stream ?? null,
    name,
    connectTimeoutMs: milliseconds('connectTimeoutMs', options.connectTimeoutMs, 5_000),
    ackTimeoutMs: milliseconds('ackTimeoutMs', options.ackTimeoutMs, 5_000),
    verifyAtStart,
    createStream,
    relay,
    relayEnabled,
    requiredDuplicateWindowMs: requiredDuplicateWindowMs(relay),
  };
}

export function isSubjectPrefix(value: unknown): value is string {
  return typeof value === 'string' && value.split('.').every((token) => SUBJECT_TOKEN.test(token));
}

/** A server URL as it may be shown: the password masked. */
export function displayServer(server: string): string {
  try {
    const url = new URL(server);
    if (url.password) url.password = '***';
    return JSON.stringify(url.toString());
  } catch {
    return 'a value that is not a URL (not shown, it may contain a password)';
  }
}

function serversOption(value: unknown): string[] {
  const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
  if (!Array.isArray(list) || list.length === 0) {
    throw invalid(
      'servers',
      describeValue(value),
      'must be a nats:// URL or a non-empty list of them',
    );
  }
  return list.map((server: unknown) => {
    if (typeof server !== 'string') {
      throw invalid('servers', describeValue(server), 'must hold nats:// or tls:// URLs');
    }
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw invalid('servers', displayServer(server), 'must hold nats:// or tls:// URLs');
    }
    if (url.protocol !== 'nats:' && url.protocol !== 'tls:') {
      throw invalid(
        'servers',
        displayServer(server),
        `must hold nats:// or tls:// URLs (not ${url.protocol}//)`,
      );
    }
    if (url.hostname === '' || (url.pathname !== '' && url.pathname !== '/') || url.search) {
      throw invalid(
        'servers',
        displayServer(server),
        'must hold URLs of the form nats://[user:password@]host[:port]',
      );
    }
    return server;
  });
}

function milliseconds(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 600_000) {
    throw invalid(name, describeValue(value), 'must be an integer from 1 to 600000');
  }
  return value;
}

function invalid(
  option: string,
  value: string,
  requirement: string,
): InvalidOutboxPublisherOptionsError {
  return new InvalidOutboxPublisherOptionsError(NATS_PUBLISHER, option, value, requirement);
}
