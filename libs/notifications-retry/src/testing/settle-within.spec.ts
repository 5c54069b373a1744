import { settleWithin } from './settle-within';

describe('settleWithin', () => {
  it('passes a value through', async () => {
    await expect(settleWithin(Promise.resolve(42), 1_000)).resolves.toEqual({
      kind: 'resolved',
      value: 42,
    });
  });

  it('passes a rejection through as a value, whatever was thrown', async () => {
    const reason = { not: 'an Error' };
    const rejecting = (async () => {
      throw reason;
    })();
    await expect(settleWithin(rejecting, 1_000)).resolves.toEqual({
      kind: 'rejected',
      error: reason,
    });
  });

  it('gives up on a promise that never settles after the given time', async () => {
    const started = Date.now();
    const outcome = await settleWithin(new Promise<never>(() => undefined), 50);
    expect(outcome).toEqual({ kind: 'pending' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
