import { NonRetriableDeliveryError } from '../providers/errors/non-retriable-delivery.error';
import {
  ProviderAdapter,
  type OutgoingNotification,
  type SendContext,
  type SendResult,
} from '../providers/provider-adapter';
import { attemptDelivery, type LateAnswer } from './attempt-delivery';

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

const untilAborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

describe('attemptDelivery: the settle margin after the timeout', () => {
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

  it('writes the attempt off after the margin; the call stays tracked until it settles', async () => {
    const late: LateAnswer[] = [];
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
        settled = call;
      },
      onLateAnswer: (answer) => late.push(answer),
    });

    expect(performance.now() - started).toBeGreaterThanOrEqual(85);
    expect(outcome).toMatchObject({ kind: 'retriable', errorCode: 'provider_timeout' });
    let done = false;
    void settled?.then(() => (done = true));
    await sleep(20);
    expect(done).toBe(false);
    finish?.();
    await settled;
    expect(done).toBe(true);
    expect(late).toEqual([{ answer: 'resolved', recorded: false }]);
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
