import { ENVIRONMENT_VARIABLES, OWN_PREFIXES } from './environment-variables';

export interface UnknownEnvironmentVariable {
  readonly name: string;
  /** The declared name it most likely means (one or two letters off), if any. */
  readonly didYouMean: string | null;
}

const KNOWN = new Set(ENVIRONMENT_VARIABLES.map((variable) => variable.name));

/**
 * Variables under the app's prefixes (RETRY_, NATS_, OUTBOX_) that nothing reads: a misspelt
 * RETRY_CONCURENCY would otherwise leave the default in force without a word. Names only: the
 * values may be secrets.
 */
export function unknownEnvironmentVariables(env: NodeJS.ProcessEnv): UnknownEnvironmentVariable[] {
  return Object.keys(env)
    .filter((name) => OWN_PREFIXES.some((prefix) => name.startsWith(prefix)) && !KNOWN.has(name))
    .sort()
    .map((name) => ({ name, didYouMean: closest(name) }));
}

function closest(name: string): string | null {
  let best: string | null = null;
  let bestDistance = 3;
  for (const known of KNOWN) {
    const distance = editDistance(name, known);
    if (distance < bestDistance) {
      best = known;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}
