/** How a promise came out of a time-boxed wait. */
export type Settlement<T> =
  | { readonly kind: 'resolved'; readonly value: T }
  | { readonly kind: 'rejected'; readonly error: unknown }
  | { readonly kind: 'pending' };

/**
 * Waits for `promise` at most `ms`. A check must report an adapter that never
 * settles, not become a test that never ends.
 */
export async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<Settlement<T>> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<Settlement<T>>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'pending' }), ms);
  });
  const settled = promise.then(
    (value): Settlement<T> => ({ kind: 'resolved', value }),
    (error: unknown): Settlement<T> => ({ kind: 'rejected', error }),
  );
  try {
    return await Promise.race([settled, pending]);
  } finally {
    clearTimeout(timer);
  }
}
