/**
 * The host app as `main.ts` starts it (bootstrapHost: configuration from the
 * environment, JSON logs on stdout, Nest shutdown hooks on SIGTERM), plus a
 * team module with one slow adapter. Run as a child process by
 * shutdown.sigterm.spec.ts:
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register test/shutdown.child-host.ts
 *
 * SLOW_SEND_MS: how long each send takes. The adapter does not give up early
 * on its signal unless the worker aborts it (the grace period ran out).
 */
import 'reflect-metadata';
import { Injectable, Logger, Module } from '@nestjs/common';
import {
  NotificationProvider,
  ProviderAdapter,
  RetriableDeliveryError,
  type OutgoingNotification,
  type SendContext,
  type SendResult,
} from '@pin/notifications-retry';
import { bootstrapHost, exitOnStartupFailure } from '../apps/pin-notifications/src/bootstrap';

export const SLOW_PROVIDER_KEY = 'slow';

@Injectable()
@NotificationProvider(SLOW_PROVIDER_KEY)
class SlowProviderAdapter extends ProviderAdapter {
  private readonly logger = new Logger('SlowProvider');
  private readonly delayMs = Number(process.env.SLOW_SEND_MS ?? 3_000);

  async send(message: OutgoingNotification, context: SendContext): Promise<SendResult> {
    this.logger.log({ msg: 'slow-send-started', event: 'slow-send-started', id: message.id });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, this.delayMs);
      context.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(new RetriableDeliveryError('aborted'));
        },
        { once: true },
      );
    });
    this.logger.log({ msg: 'slow-send-finished', event: 'slow-send-finished', id: message.id });
    return { providerMessageId: `slow-${message.id}` };
  }
}

@Module({ providers: [SlowProviderAdapter] })
class SlowProviderModule {}

bootstrapHost({ env: process.env, imports: [SlowProviderModule] }).catch(exitOnStartupFailure);
