import { createHash } from 'node:crypto';

/** What the fault-injecting provider does with one call. */
export type FaultKind = 'success' | 'retriable' | 'non-retriable' | 'throttled' | 'hang';

/** Shares of the calls, in percent; whatever is left succeeds. */
export const FAULT_SHARES: ReadonlyArray<readonly [Exclude<FaultKind, 'success'>, number]> = [
  ['retriable', 30],
  ['non-retriable', 5],
  ['throttled', 5],
  ['hang', 5],
];

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
