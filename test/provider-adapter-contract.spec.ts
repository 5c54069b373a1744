import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import {
  DeliveryError,
  NonRetriableDeliveryError,
  ProviderAdapter,
  RetriableDeliveryError,
  WebhookProviderAdapter,
  type OutgoingNotification,
  type SendContext,
  type SendResult,
} from '@pin/notifications-retry';
import { InAppProviderAdapter } from '@pin/notifications-retry/providers/built-in/in-app.provider-adapter';
import {
  EmailStubProviderAdapter,
  PushStubProviderAdapter,
  SmsStubProviderAdapter,
} from '@pin/notifications-retry/providers/built-in/stub-provider-adapters';
import { resolveOptions } from '@pin/notifications-retry/options/resolve-options';
import {
  applicableContractChecks,
  checkProviderAdapterContract,
  describeProviderAdapterContract,
  PROVIDER_ADAPTER_CONTRACT_CHECKS,
  webhookContractHarness,
  type ProviderAdapterContractCheckName,
  type ProviderAdapterContractHarnessFactory,
} from '@pin/notifications-retry/testing';

// The stubs log every pretend delivery; that is noise here.
Logger.overrideLogger(false);

class ContractWebhookAdapter extends WebhookProviderAdapter {
  constructor(url: string) {
    super({ url, headers: { authorization: 'Bearer contract-test-token' } });
  }
}

/** For adapters with no provider behind them to script: only the success check applies. */
function successOnlyHarness(
  createAdapter: () => ProviderAdapter,
): ProviderAdapterContractHarnessFactory {
  return {
    capabilities: { idempotencyKey: false, failures: false, throttling: false, hanging: false },
    create: () => ({
      adapter: createAdapter(),
      respondWith(behaviour) {
        if (behaviour !== 'success')
          throw new Error(`this harness cannot make the adapter ${behaviour}`);
      },
      lastIdempotencyKey: () => undefined,
    }),
  };
}

const allStubsOn = resolveOptions({ stubProviders: { email: true, sms: true, push: true } });

describeProviderAdapterContract(
  'InAppProviderAdapter',
  successOnlyHarness(() => new InAppProviderAdapter()),
);
describeProviderAdapterContract(
  'EmailStubProviderAdapter',
  successOnlyHarness(() => new EmailStubProviderAdapter(allStubsOn)),
);
describeProviderAdapterContract(
  'SmsStubProviderAdapter',
  successOnlyHarness(() => new SmsStubProviderAdapter(allStubsOn)),
);
describeProviderAdapterContract(
  'PushStubProviderAdapter',
  successOnlyHarness(() => new PushStubProviderAdapter(allStubsOn)),
);
describeProviderAdapterContract(
  'WebhookProviderAdapter',
  webhookContractHarness((url) => new ContractWebhookAdapter(url)),
);

// Each wraps a correct webhook adapter and gets exactly one thing wrong.

/** Sends a key of its own making, so a resend after a crash is a new message to the provider. */
class IgnoresIdempotencyKeyAdapter extends ProviderAdapter {
  constructor(private readonly inner: ProviderAdapter) {
    super();
  }

  override send(message: OutgoingNotification, context: SendContext): Promise<SendResult> {
    return this.inner.send(message, { ...context, idempotencyKey: randomUUID() });
  }
}

/** Never hands the signal on: waits for the provider however long it takes. */
class IgnoresSignalAdapter extends ProviderAdapter {
  constructor(private readonly inner: ProviderAdapter) {
    super();
  }

  override send(message: OutgoingNotification, context: SendContext): Promise<SendResult> {
    return this.inner.send(message, { ...context, signal: new AbortController().signal });
  }
}

/** Turns a 400 into a plain Error, which the worker would retry until max_attempts. */
class PlainErrorForBadRequestAdapter extends ProviderAdapter {
  constructor(private readonly inner: ProviderAdapter) {
    super();
  }

  override async send(message: OutgoingNotification, context: SendContext): Promise<SendResult> {
    try {
      return await this.inner.send(message, context);
    } catch (error) {
      if (error instanceof NonRetriableDeliveryError) throw new Error('bad request');
      throw error;
    }
  }
}

type Echo = (message: OutgoingNotification) => string;

/** Puts the recipient's address (or what `echo` picks) into its error messages, or its codes. */
class LeaksRecipientAdapter extends ProviderAdapter {
  constructor(
    private readonly inner: ProviderAdapter,
    private readonly echo: Echo = (message) => message.recipientAddress,
    private readonly where: 'message' | 'code' = 'message',
  ) {
    super();
  }

  override async send(message: OutgoingNotification, context: SendContext): Promise<SendResult> {
    try {
      return await this.inner.send(message, context);
    } catch (error) {
      const echoed = this.echo(message);
      const code = (cause: DeliveryError): string => (this.where === 'code' ? echoed : cause.code);
      const text = (cause: Error): string =>
        this.where === 'message' ? `${cause.message} for ${echoed}` : cause.message;
      if (error instanceof NonRetriableDeliveryError) {
        throw new NonRetriableDeliveryError(code(error), text(error));
      }
      if (error instanceof RetriableDeliveryError) {
        throw new RetriableDeliveryError(code(error), text(error));
      }
      throw error;
    }
  }
}

const webhookWrappedIn = (
  wrap: (inner: ProviderAdapter) => ProviderAdapter,
): ProviderAdapterContractHarnessFactory =>
  webhookContractHarness((url) => wrap(new ContractWebhookAdapter(url)));

describe('checkProviderAdapterContract', () => {
  it('finds nothing wrong with the webhook adapter, and runs every check for a fully capable harness', async () => {
    const factory = webhookWrappedIn((inner) => inner);
    expect(applicableContractChecks(factory)).toEqual(PROVIDER_ADAPTER_CONTRACT_CHECKS);
    await expect(checkProviderAdapterContract(factory)).resolves.toEqual([]);
  });

  it('runs only the success check for a harness without capabilities', async () => {
    const factory = successOnlyHarness(() => new InAppProviderAdapter());
    expect(applicableContractChecks(factory).map((check) => check.name)).toEqual([
      'success-returns-message-id',
    ]);
    await expect(checkProviderAdapterContract(factory)).resolves.toEqual([]);
  });

  it.each<
    [string, (inner: ProviderAdapter) => ProviderAdapter, ProviderAdapterContractCheckName[]]
  >([
    [
      'ignores the idempotency key',
      (inner) => new IgnoresIdempotencyKeyAdapter(inner),
      ['idempotency-key-reaches-provider'],
    ],
    [
      'ignores the signal and hangs as long as the provider does',
      (inner) => new IgnoresSignalAdapter(inner),
      ['abort-settles-promptly'],
    ],
    [
      'throws a plain Error for a 400',
      (inner) => new PlainErrorForBadRequestAdapter(inner),
      ['non-retriable-failure-is-non-retriable'],
    ],
    [
      "puts the recipient's address in its errors",
      (inner) => new LeaksRecipientAdapter(inner),
      ['failure-errors-omit-personal-data'],
    ],
  ])('catches an adapter that %s', async (_case, wrap, expected) => {
    const violations = await checkProviderAdapterContract(webhookWrappedIn(wrap));
    expect(violations.map((violation) => violation.check)).toEqual(expected);
    for (const violation of violations) expect(violation.message).not.toBe('');
  });

  it.each<[string, Echo, 'message' | 'code']>([
    ['the URL-encoded address', (m) => encodeURIComponent(m.recipientAddress), 'message'],
    ['the upper-cased subject', (m) => m.subject!.toUpperCase(), 'message'],
    ['the first 40 characters of the body', (m) => m.body.slice(0, 40), 'message'],
    [
      'the body JSON-encoded twice',
      (m) => JSON.stringify(JSON.stringify({ b: m.body })),
      'message',
    ],
    ['half the address as its code', (m) => m.recipientAddress.slice(0, 18), 'code'],
  ])('catches an adapter that puts %s in its errors', async (_case, echo, where) => {
    const violations = await checkProviderAdapterContract(
      webhookWrappedIn((inner) => new LeaksRecipientAdapter(inner, echo, where)),
    );
    expect(violations.map((violation) => violation.check)).toEqual([
      'failure-errors-omit-personal-data',
    ]);
  });

  it('reports an adapter that never settles instead of hanging the test', async () => {
    const neverSettles = new (class extends ProviderAdapter {
      override send(): Promise<SendResult> {
        return new Promise<SendResult>(() => undefined);
      }
    })();
    const started = Date.now();
    const violations = await checkProviderAdapterContract(
      successOnlyHarness(() => neverSettles),
      {
        callTimeoutMs: 200,
      },
    );
    expect(violations).toEqual([
      {
        check: 'success-returns-message-id',
        message: 'did not settle within 200 ms although the provider answered success',
      },
    ]);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('names the class and code of a wrong error, never its message', async () => {
    const violations = await checkProviderAdapterContract(
      webhookWrappedIn((inner) => new PlainErrorForBadRequestAdapter(inner)),
    );
    expect(violations).toHaveLength(1);
    expect(violations[0].message).toContain('a plain Error');
    expect(violations[0].message).not.toContain('bad request');
  });
});
