import { NonRetriableDeliveryError } from '../providers/errors/non-retriable-delivery.error';
import {
  ProviderAdapter,
  type OutgoingNotification,
  type SendContext,
  type SendResult,
} from '../providers/provider-adapter';
import { attemptDelivery, type LateAnswer, type LateSuccess } from './attempt-delivery';

const message: OutgoingNotification = {
  id: '2b7e1c4d-5f60-4a1b-9c8d-7e6f5a4b3c2d',
  tenantId: null,
  channel: 'email',
  recipientAddress: 'someone@example.org',
  subject: 'Subject',
  body: 'Body',
  attempts: 0,
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** An adapter that answers what `impl` answers, with the call's signal. */
class Adapter extends ProviderAdapter {
  constructor(private readonly impl: (context: SendContext) => Promise<SendResult>) {
    super();
  }

  override send(_: OutgoingNotification, context: SendContext): Promise<SendResult> {
    return this.impl(context);
  }
}

/** An adapter answer the test gives when it likes, success or failure. */
function deferredAnswer(): {
  promise: Promise<SendResult>;
  resolve: (result: SendResult) => void;
  reject: (error: Error) => void;
} {
  let resolve!: (result: SendResult) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<SendResult>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const untilAborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

describe('attemptDelivery: the settle margin after the timeout', () => {
  it('with no margin, writes the call off with the timeout: an answer the next I/O turn brings is late', async () => {
    // An answer that arrives by I/O right after the abort (setImmediate: the check phase, after the
    // poll) comes after the timeout's own turn of the event loop, which is where the write-off is.
    const late: LateAnswer[] = [];
    const successes: LateSuccess[] = [];
    const adapter = new Adapter(async ({ signal }) => {
      await untilAborted(signal);
      await new Promise((resolve) => setImmediate(resolve));
      return { providerMessageId: 'late-id' };
    });

    const outcome = await attemptDelivery(adapter, message, 20, undefined, {
      settleMarginMs: 0,
      onLateAnswer: (answer) => late.push(answer),
      onLateSuccess: (success) => successes.push(success),
    });
    await sleep(10);

    expect(outcome).toMatchObject({
      kind: 'retriable',
      errorCode: 'provider_timeout',
      unsettled: true,
    });
    expect(late).toEqual([{ answer: 'resolved', recorded: false, delivered: true }]);
    expect(successes).toEqual([{ providerMessageId: 'late-id', writtenOffAs: 'timeout' }]);
  });

  it('takes a success inside the margin as the outcome, and says it was late', async () => {
    const late: LateAnswer[] = [];
    const adapter = new Adapter(async ({ signal }) => {
      await untilAborted(signal);
      await sleep(20);
      return { providerMessageId: 'late-id' };
    });

    const outcome = await attemptDelivery(adapter, message, 30, undefined, {
      settleMarginMs: 1_000,
      onLateAnswer: (answer) => late.push(answer),
    });

    expect(outcome).toEqual({ kind: 'sent', providerMessageId: 'late-id' });
    expect(late).toEqual([{ answer: 'resolved', recorded: true }]);
  });

  it('takes a DeliveryError thrown inside the margin at its word', async () => {
    const adapter = new Adapter(async ({ signal }) => {
      await untilAborted(signal);
      throw new NonRetriableDeliveryError('invalid_recipient');
    });

    const outcome = await attemptDelivery(adapter, message, 30, undefined, { settleMarginMs: 500 });

    expect(outcome).toMatchObject({ kind: 'non-retriable', errorCode: 'invalid_recipient' });
  });

  it('tells of a late failure too: inside the margin as recorded, after the write-off as not', async () => {
    const late: LateAnswer[] = [];
    const onLateAnswer = (answer: LateAnswer): number => late.push(answer);
    const afterWriteOff = deferredAnswer();

    await attemptDelivery(
      new Adapter(async ({ signal }) => {
        await untilAborted(signal);
        throw new NonRetriableDeliveryError('invalid_recipient');
      }),
      message,
      20,
      undefined,
      { settleMarginMs: 500, onLateAnswer },
    );
    expect(late).toEqual([{ answer: 'rejected', recorded: true }]);

    await attemptDelivery(new Adapter(() => afterWriteOff.promise), message, 20, undefined, {
      settleMarginMs: 10,
      onLateAnswer,
    });
    afterWriteOff.reject(new Error('connection reset'));
    await sleep(10);
    expect(late).toEqual([
      { answer: 'rejected', recorded: true },
      { answer: 'rejected', recorded: false },
    ]);
  });

  it('does not tell of an answer that came before the timeout, success or failure', async () => {
    const late: LateAnswer[] = [];
    const settle = { settleMarginMs: 500, onLateAnswer: (answer: LateAnswer) => late.push(answer) };

    await attemptDelivery(
      new Adapter(async () => ({ providerMessageId: 'in-time' })),
      message,
      1_000,
      undefined,
      settle,
    );
    await attemptDelivery(
      new Adapter(async () => {
        throw new NonRetriableDeliveryError('invalid_recipient');
      }),
      message,
      1_000,
      undefined,
      settle,
    );
    await sleep(10);

    expect(late).toEqual([]);
  });

  it('counts any other error an adapter throws once its signal fired as a timeout', async () => {
    const adapter = new Adapter(async ({ signal }) => {
      await untilAborted(signal);
      throw new Error('The operation was aborted');
    });

    const outcome = await attemptDelivery(adapter, message, 30, undefined, { settleMarginMs: 500 });

    expect(outcome).toEqual({
      kind: 'retriable',
      errorCode: 'provider_timeout',
      errorMessage: 'provider call exceeded 30 ms',
    });
  });

  it('writes the attempt off after the margin; the call stays tracked until it settles, and its success is handed over first', async () => {
    const late: LateAnswer[] = [];
    const successes: Array<{ success: LateSuccess; callSettled: boolean }> = [];
    let done = false;
    let settled: Promise<unknown> | undefined;
    let finish: (() => void) | undefined;
    const adapter = new Adapter(
      () =>
        new Promise<SendResult>((resolve) => {
          finish = () => resolve({ providerMessageId: 'too-late' });
        }),
    );

    const started = performance.now();
    const outcome = await attemptDelivery(adapter, message, 30, undefined, {
      settleMarginMs: 60,
      onCallStarted: (call) => {
        // What the caller chains to the call (the write of its late success) runs after the hand-over.
        settled = call.then(() => successes.length);
      },
      onLateAnswer: (answer) => late.push(answer),
      onLateSuccess: (success) => successes.push({ success, callSettled: done }),
    });

    expect(performance.now() - started).toBeGreaterThanOrEqual(85);
    expect(outcome).toMatchObject({ kind: 'retriable', errorCode: 'provider_timeout' });
    void settled?.then(() => (done = true));
    await sleep(20);
    expect(done).toBe(false);
    expect(successes).toEqual([]);
    finish?.();
    expect(await settled).toBe(1);
    expect(done).toBe(true);
    expect(late).toEqual([{ answer: 'resolved', recorded: false, delivered: true }]);
    expect(successes).toEqual([
      { success: { providerMessageId: 'too-late', writtenOffAs: 'timeout' }, callSettled: false },
    ]);
  });

  it('hands over a success that answers after the worker cut the call, as written off by the interrupt', async () => {
    const interrupt = new AbortController();
    const successes: LateSuccess[] = [];
    const answer = deferredAnswer();
    const adapter = new Adapter(() => answer.promise);
    setTimeout(() => interrupt.abort(new Error('shutdown grace period over')), 20);

    const outcome = await attemptDelivery(adapter, message, 5_000, interrupt.signal, {
      settleMarginMs: 1_000,
      onLateSuccess: (success) => successes.push(success),
    });
    expect(outcome).toEqual({ kind: 'interrupted', errorCode: 'worker_interrupted' });
    answer.resolve({ providerMessageId: 'after-cut' });
    await sleep(10);

    expect(successes).toEqual([{ providerMessageId: 'after-cut', writtenOffAs: 'interrupted' }]);
  });

  it('hands over only a success answered after the write-off: not one inside the margin, a late failure, or a late result without a message id', async () => {
    const successes: LateSuccess[] = [];
    const onLateSuccess = (success: LateSuccess): number => successes.push(success);
    const inMargin = new Adapter(async ({ signal }) => {
      await untilAborted(signal);
      return { providerMessageId: 'in-time' };
    });
    const lateFailure = deferredAnswer();
    const lateNoId = deferredAnswer();
    const lateSuccess = deferredAnswer();

    await attemptDelivery(inMargin, message, 20, undefined, {
      settleMarginMs: 500,
      onLateSuccess,
    });
    await attemptDelivery(new Adapter(() => lateFailure.promise), message, 20, undefined, {
      settleMarginMs: 10,
      onLateSuccess,
    });
    await attemptDelivery(new Adapter(() => lateNoId.promise), message, 20, undefined, {
      settleMarginMs: 10,
      onLateSuccess,
    });
    await attemptDelivery(new Adapter(() => lateSuccess.promise), message, 20, undefined, {
      settleMarginMs: 10,
      onLateSuccess,
    });
    lateFailure.reject(new Error('connection reset'));
    lateNoId.resolve({ providerMessageId: '  ' });
    lateSuccess.resolve({ providerMessageId: 'the-one' });
    await sleep(10);

    expect(successes).toEqual([{ providerMessageId: 'the-one', writtenOffAs: 'timeout' }]);
  });

  it('hands over a late message id as it would have been stored: one that carries the address is replaced', async () => {
    const successes: LateSuccess[] = [];
    const answer = deferredAnswer();

    await attemptDelivery(new Adapter(() => answer.promise), message, 20, undefined, {
      settleMarginMs: 10,
      onLateSuccess: (success) => successes.push(success),
    });
    answer.resolve({ providerMessageId: `sent-to-${message.recipientAddress}` });
    await sleep(10);

    expect(successes).toHaveLength(1);
    expect(successes[0].providerMessageId).toMatch(/^redacted:[0-9a-f]{16}$/);
  });

  it('reports an interrupt inside the margin as interrupted, not as a timeout', async () => {
    const interrupt = new AbortController();
    const adapter = new Adapter(() => new Promise<SendResult>(() => undefined));
    setTimeout(() => interrupt.abort(new Error('shutdown grace period over')), 50);

    const outcome = await attemptDelivery(adapter, message, 30, interrupt.signal, {
      settleMarginMs: 5_000,
    });

    expect(outcome).toEqual({ kind: 'interrupted', errorCode: 'worker_interrupted' });
  });

  it('with no margin, writes the attempt off at the timeout as before', async () => {
    const adapter = new Adapter(() => new Promise<SendResult>(() => undefined));

    const started = performance.now();
    const outcome = await attemptDelivery(adapter, message, 40);

    expect(performance.now() - started).toBeLessThan(1_000);
    expect(outcome).toMatchObject({ kind: 'retriable', errorCode: 'provider_timeout' });
  });
});
