import { randomUUID } from 'node:crypto';
import { NonRetriableDeliveryError, RetriableDeliveryError } from '@pin/notifications-retry';
import { DemoFlakyProviderAdapter, demoFlakyOutcome } from './demo-flaky.provider-adapter';
import { demoProviderOutage } from './demo-provider-outage';

describe('demo-flaky provider', () => {
  it('sends about 60 %, fails retriably about 30 % and terminally about 10 % of attempts', () => {
    const tally = { sent: 0, retriable: 0, 'non-retriable': 0 };
    for (let i = 0; i < 20_000; i++) tally[demoFlakyOutcome(randomUUID(), 1 + (i % 4))]++;
    expect(tally.sent / 20_000).toBeCloseTo(0.6, 1);
    expect(tally.retriable / 20_000).toBeCloseTo(0.3, 1);
    expect(tally['non-retriable'] / 20_000).toBeCloseTo(0.1, 1);
  });

  it('decides by notification id and attempt, the same way every time', () => {
    const id = randomUUID();
    const outcomes = [1, 2, 3, 4].map((attempt) => demoFlakyOutcome(id, attempt));
    expect([1, 2, 3, 4].map((attempt) => demoFlakyOutcome(id, attempt))).toEqual(outcomes);
  });

  it('throws the library error that matches the outcome, with no address in it', async () => {
    const adapter = new DemoFlakyProviderAdapter();
    const seen = new Set<string>();
    for (let i = 0; seen.size < 3 && i < 200; i++) {
      const message = {
        id: randomUUID(),
        tenantId: null,
        channel: 'email',
        recipientAddress: 'user17@example.com',
        subject: 'Dividend received',
        body: 'Hi Maria',
        attempts: 0,
      };
      const expected = demoFlakyOutcome(message.id, 1);
      const result = adapter.send(message, {
        idempotencyKey: message.id,
        signal: new AbortController().signal,
      });
      if (expected === 'sent') {
        await expect(result).resolves.toEqual({
          providerMessageId: expect.stringMatching(/^demo-/),
        });
      } else {
        const error: unknown = await result.catch((thrown: unknown) => thrown);
        expect(error).toBeInstanceOf(
          expected === 'retriable' ? RetriableDeliveryError : NonRetriableDeliveryError,
        );
        expect(String((error as Error).message)).not.toContain('example.com');
      }
      seen.add(expected);
    }
    expect(seen.size).toBe(3);
  });

  it('stops waiting when the worker aborts the call', async () => {
    const controller = new AbortController();
    controller.abort(new Error('provider call exceeded 5000 ms'));
    const id = randomUUID();
    await expect(
      new DemoFlakyProviderAdapter().send(
        {
          id,
          tenantId: null,
          channel: 'email',
          recipientAddress: 'a',
          subject: null,
          body: 'b',
          attempts: 0,
        },
        { idempotencyKey: id, signal: controller.signal },
      ),
    ).rejects.toThrow();
  });

  it('answers every call with a retriable provider_unavailable during an outage, and recovers after it', async () => {
    const adapter = new DemoFlakyProviderAdapter();
    // Ids the demo would send at their first attempt: the outage alone makes them fail.
    const ids = Array.from({ length: 40 }, () => randomUUID()).filter(
      (id) => demoFlakyOutcome(id, 1) === 'sent',
    );
    const send = (id: string) =>
      adapter.send(
        {
          id,
          tenantId: null,
          channel: 'email',
          recipientAddress: 'a@example.com',
          subject: null,
          body: 'b',
          attempts: 0,
        },
        { idempotencyKey: id, signal: new AbortController().signal },
      );
    demoProviderOutage.begin();
    try {
      for (const id of ids.slice(0, 5)) {
        const error: unknown = await send(id).catch((thrown: unknown) => thrown);
        expect(error).toBeInstanceOf(RetriableDeliveryError);
        expect((error as RetriableDeliveryError).code).toBe('provider_unavailable');
      }
    } finally {
      demoProviderOutage.end();
    }
    await expect(send(ids[0])).resolves.toEqual({
      providerMessageId: expect.stringMatching(/^demo-/),
    });
  });
});
