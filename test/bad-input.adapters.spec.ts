import { Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  NotificationProvider,
  ProviderAdapter,
  type OutgoingNotification,
  type SendResult,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import { insertNotification, minutesAgo, outboxEvents, readNotification } from './support/fixtures';
import { useRetryTestApp, type RetryTestApp } from './support/retry-test-app';

/**
 * Hands back whatever the test scripts, exactly: no `async`, no `await`, so a
 * thenable or a non-promise reaches the worker as the adapter returned it.
 */
@Injectable()
@NotificationProvider('raw')
class RawAdapter extends ProviderAdapter {
  behaviour: (message: OutgoingNotification) => unknown = (message) => ({
    providerMessageId: `p-${message.id}`,
  });

  /** Calls for the row under test (not the ordinary row). */
  badCalls = 0;

  send(message: OutgoingNotification): Promise<SendResult> {
    if (message.attempts > 0) this.badCalls++;
    return this.behaviour(message) as Promise<SendResult>;
  }
}

/**
 * Adapters that answer what no adapter should. Throwing a string, throwing
 * undefined, a plain Error, no id, an undefined result and a numeric id are in
 * retry-cycle.outcomes.spec.ts ("counts an adapter that … as a retriable
 * failure"); these are the rest. In every case the bad row ends recoverable
 * (retriable, or untouched and due) and the other row of the cycle is sent.
 */
describe('bad input: adapter results (real PostgreSQL)', () => {
  const t = useRetryTestApp({
    options: { concurrency: 2 },
    adapters: [RawAdapter],
    channels: [{ key: 'email', providerKey: 'raw', maxAttempts: 3 }],
  });
  let app: RetryTestApp;
  let ds: DataSource;
  let adapter: RawAdapter;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

  beforeAll(() => {
    ({ app, ds } = t);
    adapter = app.module.get(RawAdapter);
    process.on('unhandledRejection', onUnhandled);
  });

  afterAll(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  beforeEach(() => {
    // The harness has reset the tables, the log lines and the clock, and inserted the channel.
    unhandled.length = 0;
    adapter.badCalls = 0;
  });

  /** One row answered by `behaviour`, one ordinary row; runs a cycle. */
  async function cycleWith(behaviour: () => unknown): Promise<{ bad: string; ordinary: string }> {
    const now = app.clock.now();
    const bad = await insertNotification(ds, {
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(now, 2),
    });
    const ordinary = await insertNotification(ds, {
      status: 'Failed',
      nextAttemptAt: minutesAgo(now, 1),
    });
    adapter.behaviour = (message) =>
      message.id === bad ? behaviour() : { providerMessageId: `p-${message.id}` };
    completed(await app.cycles.runCycle());
    expect((await readNotification(ds, ordinary)).status).toBe('Sent');
    expect(await outboxEvents(ds, ordinary)).toHaveLength(1);
    // Whatever settles late must not surface as a process-level failure.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
    return { bad, ordinary };
  }

  async function expectRetried(id: string, code: string): Promise<void> {
    expect(await readNotification(ds, id)).toMatchObject({
      status: 'Failed',
      attempts: 2,
      last_error_code: code,
    });
    expect(app.logs.events('item-retried')).toEqual([
      expect.objectContaining({ notificationId: id, errorCode: code }),
    ]);
    expect(await outboxEvents(ds, id)).toHaveLength(0);
  }

  it('throws null → a retriable provider_error_non_error', async () => {
    const { bad } = await cycleWith(() => {
      throw null;
    });
    await expectRetried(bad, 'provider_error_non_error');
  });

  it('rejects with null → a retriable provider_error_non_error', async () => {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the bad input under test
    const { bad } = await cycleWith(() => Promise.reject(null));
    await expectRetried(bad, 'provider_error_non_error');
  });

  it('a thenable that resolves and then rejects: the first settlement wins (Sent), the late rejection is swallowed', async () => {
    const { bad } = await cycleWith(() => ({
      then(resolve: (value: SendResult) => void, reject: (reason: unknown) => void): void {
        resolve({ providerMessageId: 'first' });
        reject(new Error('settled again'));
        resolve({ providerMessageId: 'second' });
      },
    }));
    expect(await readNotification(ds, bad)).toMatchObject({
      status: 'Sent',
      provider_message_id: 'first',
    });
    expect(await outboxEvents(ds, bad)).toHaveLength(1);
  });

  it('a thenable that rejects and later resolves: counted as the failure it first reported', async () => {
    const { bad } = await cycleWith(() => ({
      then(resolve: (value: SendResult) => void, reject: (reason: unknown) => void): void {
        reject(new Error('first: refused'));
        setTimeout(() => resolve({ providerMessageId: 'late' }), 1);
      },
    }));
    await expectRetried(bad, 'provider_error');
  });

  it('a thenable that calls back twice asynchronously with different ids keeps the first', async () => {
    const { bad } = await cycleWith(() => ({
      then(resolve: (value: SendResult) => void): void {
        setTimeout(() => resolve({ providerMessageId: 'one' }), 1);
        setTimeout(() => resolve({ providerMessageId: 'two' }), 2);
      },
    }));
    expect((await readNotification(ds, bad)).provider_message_id).toBe('one');
  });

  it.each<[string, () => unknown]>([
    ['an empty id', () => ({ providerMessageId: '' })],
    ['a blank id', () => ({ providerMessageId: ' \t\n' })],
    ['a String object id', () => ({ providerMessageId: new String('boxed') })],
    ['null', () => null],
    ['a bare string', () => 'msg-1'],
  ])('returns %s → a retriable provider_invalid_result', async (_label, behaviour) => {
    const { bad } = await cycleWith(behaviour);
    await expectRetried(bad, 'provider_invalid_result');
  });

  it('a result whose providerMessageId getter throws → a retriable provider_error', async () => {
    const { bad } = await cycleWith(() => ({
      get providerMessageId(): string {
        throw new Error('lazy field exploded');
      },
    }));
    await expectRetried(bad, 'provider_error');
  });

  it('throws an error text with NUL in it → retriable, stored with U+FFFD (text cannot hold NUL)', async () => {
    const { bad } = await cycleWith(() => {
      throw new Error('upstream said \u0000 and stopped');
    });
    await expectRetried(bad, 'provider_error');
    expect((await readNotification(ds, bad)).last_error_message).toBe(
      'upstream said \uFFFD and stopped',
    );
  });

  it('a thrown Error whose message getter throws → a retriable provider_error_unreadable', async () => {
    const hostile = Object.create(Error.prototype, {
      message: {
        get(): string {
          throw new Error('message getter exploded');
        },
      },
    }) as Error;
    const { bad } = await cycleWith(() => {
      throw hostile;
    });
    await expectRetried(bad, 'provider_error_unreadable');
  });

  it('returns an id with NUL in it → Sent, stored with U+FFFD (the delivered row must not fail its write and be re-sent)', async () => {
    const { bad } = await cycleWith(() => ({ providerMessageId: 'msg\u00001' }));
    expect(await readNotification(ds, bad)).toMatchObject({
      status: 'Sent',
      attempts: 2,
      provider_message_id: 'msg\uFFFD1',
    });
    expect(await outboxEvents(ds, bad)).toHaveLength(1);
    // A second cycle finds nothing due: the delivery was recorded, so it is not sent again.
    completed(await app.cycles.runCycle());
    expect(adapter.badCalls).toBe(1);
  });
});
