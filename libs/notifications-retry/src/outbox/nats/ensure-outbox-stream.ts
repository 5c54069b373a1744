import {
  DiscardPolicy,
  millis,
  nanos,
  NatsError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type NatsConnection,
  type StreamInfo,
} from 'nats';
import { errorText } from '../../vocabulary/error-text';
import { InvalidOutboxPublisherOptionsError } from '../../errors/invalid-outbox-publisher-options.error';
import { NOTIFICATION_DISPATCHED_TOPIC } from '../notification-dispatched-event';
import {
  describeDuplicateWindowRequirement,
  JETSTREAM_DEFAULT_DUPLICATE_WINDOW_MS,
  natsDuration,
} from './jetstream-duplicate-window';
import {
  NATS_PUBLISHER,
  type ResolvedNatsPublisherOptions,
} from './resolve-nats-publisher-options';

/** JetStream API error code: stream not found. */
const STREAM_NOT_FOUND = 10059;

/** The name the docs and the error's command suggest when no stream is configured. */
export const SUGGESTED_STREAM_NAME = 'PIN_NOTIFICATIONS';

export interface OutboxStreamState {
  readonly stream: string;
  readonly subjects: readonly string[];
  readonly created: boolean;
  readonly duplicateWindowMs: number;
  readonly requiredDuplicateWindowMs: number;
}

/**
 * What a stream made for the outbox captures: every topic of the `pin.notifications.` family
 * under the prefix, so a later contract version needs no new stream.
 */
export function outboxStreamSubjects(subjectPrefix: string | null): string[] {
  const family = `${NOTIFICATION_DISPATCHED_TOPIC.split('.').slice(0, 2).join('.')}.>`;
  return [subjectPrefix ? `${subjectPrefix}.${family}` : family];
}

/** The nats CLI command that makes the stream as the check wants it. */
export function natsStreamAddCommand(
  stream: string,
  subjectPrefix: string | null,
  requiredWindowMs: number,
): string {
  const subjects = outboxStreamSubjects(subjectPrefix).join(',');
  return `nats stream add ${stream} --subjects '${subjects}' --dupe-window ${natsDuration(createdWindowMs(requiredWindowMs))} --defaults`;
}

/**
 * Finds the stream that captures the subject (creating it when asked and none does) and checks
 * that its duplicate window drops every copy the relay may send again. Never changes an existing
 * stream: its subjects and limits belong to whoever made it. Errors name the option to fix
 * (`stream`, `createStream`), the stream and the subject, never the servers.
 */
export async function ensureOutboxStream(
  connection: NatsConnection,
  subject: string,
  options: ResolvedNatsPublisherOptions,
): Promise<OutboxStreamState> {
  const { stream, subjectPrefix, requiredDuplicateWindowMs: requiredMs } = options;
  const streamValue = stream ? JSON.stringify(stream) : 'no stream option';
  const invalid = (option: string, value: string, requirement: string) =>
    new InvalidOutboxPublisherOptionsError(NATS_PUBLISHER, option, value, requirement);
  const unreadable = (error: unknown) =>
    invalid(
      'stream',
      streamValue,
      `could not be checked: JetStream did not say which stream captures ${JSON.stringify(subject)} (${errorText(error)}); is JetStream enabled on the server (nats-server -js)?`,
    );

  let manager: JetStreamManager;
  try {
    manager = await connection.jetstreamManager({ timeout: options.ackTimeoutMs });
  } catch (error) {
    throw unreadable(error);
  }
  let found = await capturingStream(manager, subject, unreadable);
  let created = false;
  if (found.name === null) {
    const existing = stream ? await streamInfo(manager, stream, unreadable) : null;
    if (options.createStream && stream) {
      const subjects = outboxStreamSubjects(subjectPrefix);
      try {
        await manager.streams.add({
          name: stream,
          subjects,
          storage: StorageType.File,
          retention: RetentionPolicy.Limits,
          discard: DiscardPolicy.Old,
          num_replicas: 1,
          duplicate_window: nanos(createdWindowMs(requiredMs)),
        });
        created = true;
      } catch (error) {
        // Another instance starting at the same time may have made it first: look again.
        found = await capturingStream(manager, subject, unreadable);
        if (found.name !== stream) {
          throw invalid(
            'createStream',
            'true',
            `could not create the stream ${JSON.stringify(stream)} capturing ${JSON.stringify(subjects)} (${errorText(error)}): add those subjects to it, or name another stream`,
          );
        }
      }
      found = { name: stream, reason: '' };
    } else {
      const why = [
        stream && !existing ? `stream ${JSON.stringify(stream)} does not exist` : '',
        existing
          ? `stream ${JSON.stringify(stream)} captures ${JSON.stringify(existing.config.subjects ?? [])} only`
          : '',
        found.reason,
      ]
        .filter(Boolean)
        .join('; ');
      throw invalid(
        'stream',
        streamValue,
        `must name a JetStream stream that captures the subject ${JSON.stringify(subject)} (${subjectPrefix ? `subjectPrefix ${JSON.stringify(subjectPrefix)} + the topic` : 'the topic'}), and none on the broker does (${why}): create it (${natsStreamAddCommand(stream ?? SUGGESTED_STREAM_NAME, subjectPrefix, requiredMs)}), pass createStream: true${subjectPrefix ? ', or fix the prefix' : ''}`,
      );
    }
  }
  const name = found.name ?? '';
  if (stream && name !== stream) {
    throw invalid(
      'stream',
      streamValue,
      `must be the stream that captures ${JSON.stringify(subject)}, which is ${JSON.stringify(name)}`,
    );
  }
  const info = await streamInfo(manager, name, unreadable);
  const windowMs = millis(info?.config.duplicate_window ?? 0);
  if (windowMs < requiredMs) {
    throw invalid(
      'stream',
      `${JSON.stringify(name)}, whose duplicate_window is ${natsDuration(windowMs)} (${windowMs} ms)`,
      `must keep a duplicate_window of at least ${natsDuration(requiredMs)} (${requiredMs} ms = ${describeDuplicateWindowRequirement(options.relay)}), or a copy the relay sends again after that passes JetStream's deduplication: widen it (nats stream edit ${name} --dupe-window ${natsDuration(requiredMs)}) or shorten those relay options`,
    );
  }
  return {
    stream: name,
    subjects: info?.config.subjects ?? [],
    created,
    duplicateWindowMs: windowMs,
    requiredDuplicateWindowMs: requiredMs,
  };
}

/** Never below JetStream's own default: a stream made here is no stricter than one made by hand. */
function createdWindowMs(requiredMs: number): number {
  return Math.max(requiredMs, JETSTREAM_DEFAULT_DUPLICATE_WINDOW_MS);
}

async function capturingStream(
  manager: JetStreamManager,
  subject: string,
  unreadable: (error: unknown) => Error,
): Promise<{ name: string | null; reason: string }> {
  try {
    return { name: await manager.streams.find(subject), reason: '' };
  } catch (error) {
    // nats.js says so in plain text when the server lists no stream for the subject.
    if (!(error instanceof NatsError) && /no stream matches subject/.test(errorText(error))) {
      return { name: null, reason: (error as Error).message };
    }
    throw unreadable(error);
  }
}

async function streamInfo(
  manager: JetStreamManager,
  name: string,
  unreadable: (error: unknown) => Error,
): Promise<StreamInfo | null> {
  try {
    return await manager.streams.info(name);
  } catch (error) {
    if (error instanceof NatsError && error.api_error?.err_code === STREAM_NOT_FOUND) return null;
    throw unreadable(error);
  }
}
