/** A promise with its resolver, for holding a fake provider call open until the test lets go. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Polls until `check` is true, or fails after `timeoutMs` naming `what` (what was awaited). */
export async function waitFor(
  check: () => boolean,
  timeoutMs = 5_000,
  what?: string,
): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) {
      throw new Error(
        what === undefined
          ? `condition not met within ${timeoutMs} ms`
          : `not within ${timeoutMs} ms: ${what}`,
      );
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}
