import type { ResolvedOutboxRelayOptions } from '../../options/outbox-relay-options';

/** JetStream's own default `duplicate_window`; a stream this library creates never gets less. */
export const JETSTREAM_DEFAULT_DUPLICATE_WINDOW_MS = 120_000;

/**
 * The backoff's upper jitter (outbox-relay.repository.ts: × (0.8 + random() × 0.4), applied after
 * the cap), so the longest hold-back is 1.2 × backoffMaxMs.
 */
const BACKOFF_JITTER_MAX = 1.2;

/** The relay options the window depends on. */
export type DuplicateWindowInputs = Pick<
  ResolvedOutboxRelayOptions,
  'claimTtlMs' | 'backoffMaxMs' | 'pollIntervalMs'
>;

/**
 * The shortest `duplicate_window` that still drops every second copy the relay can send of an
 * event the broker already stored. A copy goes out again either after a claim lapsed (a relay died
 * after the PubAck: up to claimTtlMs) or after a retriable failure whose publish did land (an ack
 * lost: held back up to 1.2 × backoffMaxMs, after a publish that took less than claimTtlMs); then
 * the row waits up to pollIntervalMs to be found. Summed, so both may happen to one event.
 */
export function requiredDuplicateWindowMs(relay: DuplicateWindowInputs): number {
  return (
    relay.claimTtlMs + Math.ceil(relay.backoffMaxMs * BACKOFF_JITTER_MAX) + relay.pollIntervalMs
  );
}

/** How the requirement is made up, for the error that refuses a shorter window. */
export function describeDuplicateWindowRequirement(relay: DuplicateWindowInputs): string {
  return `outboxRelay.claimTtlMs ${relay.claimTtlMs} + outboxRelay.backoffMaxMs ${relay.backoffMaxMs} × ${BACKOFF_JITTER_MAX} (jitter) + outboxRelay.pollIntervalMs ${relay.pollIntervalMs}`;
}

/** A duration as the nats CLI takes it (`--dupe-window 2m5s`), rounded up to the second. */
export function natsDuration(ms: number): string {
  let seconds = Math.ceil(ms / 1_000);
  const hours = Math.floor(seconds / 3_600);
  seconds -= hours * 3_600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  const text = `${hours ? `${hours}h` : ''}${minutes ? `${minutes}m` : ''}${seconds ? `${seconds}s` : ''}`;
  return text || '0s';
}
