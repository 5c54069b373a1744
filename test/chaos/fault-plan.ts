import { createHash } from 'node:crypto';

/** What the fault-injecting provider does with one call. */
export type FaultKind =
  | 'success'
  | 'retriable'
  | 'non-retriable'
  | 'throttled'
  /** Waits for the signal, then fails: a connection cut at the timeout. */
  | 'hang'
  /** Ignores the signal and succeeds some time after the channel timeout. */
  | 'late-success'
  /** Ignores the signal and succeeds only after the timeout and the whole settle margin. */
  | 'success-after-margin'
  /** Waits for the signal to fire, then succeeds a few ms later. */
  | 'success-after-abort'
  /** The error texts and codes below echo the recipient or the content in a transformed form. */
  | 'echo-url-address'
  | 'echo-json-body'
  | 'echo-body-prefix'
  | 'echo-upper-subject'
  | 'echo-half-address'
  | 'echo-code-address';

/** The faults whose answer is a success, however late. */
export const SUCCESS_FAULTS: ReadonlySet<FaultKind> = new Set([
  'success',
  'late-success',
  'success-after-margin',
  'success-after-abort',
]);

/** Shares of the calls, in percent; whatever is left succeeds. */
export const FAULT_SHARES: ReadonlyArray<readonly [Exclude<FaultKind, 'success'>, number]> = [
  ['retriable', 27],
  ['non-retriable', 4],
  ['throttled', 4],
  ['hang', 4],
  ['late-success', 3],
  ['success-after-margin', 1],
  ['success-after-abort', 3],
  ['echo-url-address', 1],
  ['echo-json-body', 1],
  ['echo-body-prefix', 1],
  ['echo-upper-subject', 1],
  ['echo-half-address', 1],
  ['echo-code-address', 1],
];

/**
 * The codes of the adapter's non-retriable answers: a terminal row carries one
 * of these, or has used all its attempts.
 */
export const NON_RETRIABLE_CODES: ReadonlySet<string> = new Set([
  'invalid_recipient',
  'recipient_rejected',
]);

/** A number in [0, 1) fixed by its inputs: the same seed gives the same run of answers. */
export function uniform(...parts: ReadonlyArray<string | number>): number {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  return digest.readUInt32BE(0) / 0x1_0000_0000;
}

/** The answer to call number `callNo` (1-based) for a notification, deterministic by seed. */
export function faultFor(seed: number, notificationId: string, callNo: number): FaultKind {
  let u = uniform(seed, notificationId, callNo) * 100;
  for (const [kind, share] of FAULT_SHARES) {
    if (u < share) return kind;
    u -= share;
  }
  return 'success';
}

/** A delay in [min, max) ms for one call, fixed by the seed like its answer. */
export function delayFor(
  seed: number,
  notificationId: string,
  callNo: number,
  range: { readonly min: number; readonly max: number },
): number {
  return Math.round(
    range.min + uniform(seed, 'delay', notificationId, callNo) * (range.max - range.min),
  );
}

/** A UUID derived from the seed and a row number, so a seed fixes the ids too. */
export function seededUuid(seed: number, n: number): string {
  const hex = createHash('sha256').update(`chaos:${seed}:${n}`).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A small seeded PRNG (mulberry32) for the runner's chaos schedule. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
  };
}
