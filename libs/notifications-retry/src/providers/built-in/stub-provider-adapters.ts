import { Inject, Injectable, Logger } from '@nestjs/common';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../../options/notifications-retry-options';
import { NotificationProvider } from '../notification-provider.decorator';
import { ProviderAdapter, type OutgoingNotification, type SendResult } from '../provider-adapter';

type StubChannel = keyof ResolvedNotificationsRetryOptions['stubProviders'];

/**
 * Stand-ins for external providers that are not integrated yet. Each one is off
 * unless its `stubProviders` flag is on; while off, its channel's rows wait.
 * When on, it pretends to deliver and says so in the log (by id only).
 */
abstract class StubProviderAdapter extends ProviderAdapter {
  private readonly logger = new Logger(this.constructor.name);

  protected constructor(
    private readonly stub: StubChannel,
    private readonly options: ResolvedNotificationsRetryOptions,
  ) {
    super();
  }

  override isEnabled(): boolean {
    return this.options.stubProviders[this.stub];
  }

  send(message: OutgoingNotification): Promise<SendResult> {
    this.logger.debug({ msg: 'stub-provider-send', notificationId: message.id, stub: this.stub });
    return Promise.resolve({ providerMessageId: `stub-${this.stub}:${message.id}` });
  }
}

@Injectable()
@NotificationProvider('stub-email')
export class EmailStubProviderAdapter extends StubProviderAdapter {
  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS) options: ResolvedNotificationsRetryOptions,
  ) {
    super('email', options);
  }
}

@Injectable()
@NotificationProvider('stub-sms')
export class SmsStubProviderAdapter extends StubProviderAdapter {
  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS) options: ResolvedNotificationsRetryOptions,
  ) {
    super('sms', options);
  }
}

@Injectable()
@NotificationProvider('stub-push')
export class PushStubProviderAdapter extends StubProviderAdapter {
  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS) options: ResolvedNotificationsRetryOptions,
  ) {
    super('push', options);
  }
}
