import { ConfigurableModuleBuilder, type Provider, type Type } from '@nestjs/common';
import { AlertSink } from './alerts/alert-sink';
import { ChannelCatalog } from './channels/channel-catalog';
import { Clock } from './clock/clock';
import { RandomSource } from './clock/random-source';
import { DistributedLock } from './locking/distributed-lock';
import type { NotificationsRetryModuleOptions } from './options/notifications-retry-options';

/**
 * Replacements for the module's extension points. Each class is instantiated
 * inside the retry module, so its dependencies must be global providers or come
 * from `imports` of `forRootAsync`.
 */
export interface NotificationsRetryExtensions {
  channelCatalog?: Type<ChannelCatalog>;
  distributedLock?: Type<DistributedLock>;
  clock?: Type<Clock>;
  randomSource?: Type<RandomSource>;
  alertSink?: Type<AlertSink>;
}

interface NotificationsRetryExtras {
  isGlobal?: boolean;
  extensions?: NotificationsRetryExtensions;
}

export const {
  ConfigurableModuleClass: ConfigurableNotificationsRetryModule,
  MODULE_OPTIONS_TOKEN: NOTIFICATIONS_RETRY_MODULE_OPTIONS,
  OPTIONS_TYPE: NOTIFICATIONS_RETRY_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: NOTIFICATIONS_RETRY_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<NotificationsRetryModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras<NotificationsRetryExtras>(
    { isGlobal: false, extensions: {} },
    (definition, extras) => ({
      ...definition,
      global: extras.isGlobal,
      // Later providers win over the module's defaults registered under the same token.
      providers: [...(definition.providers ?? []), ...extensionProviders(extras.extensions ?? {})],
    }),
  )
  .build();

/** Resolved (defaulted, validated) options; inject this rather than the raw token. */
export const RESOLVED_NOTIFICATIONS_RETRY_OPTIONS = Symbol('RESOLVED_NOTIFICATIONS_RETRY_OPTIONS');

function extensionProviders(extensions: NotificationsRetryExtensions): Provider[] {
  const providers: Provider[] = [];
  if (extensions.channelCatalog)
    providers.push({ provide: ChannelCatalog, useClass: extensions.channelCatalog });
  if (extensions.distributedLock)
    providers.push({ provide: DistributedLock, useClass: extensions.distributedLock });
  if (extensions.clock) providers.push({ provide: Clock, useClass: extensions.clock });
  if (extensions.randomSource)
    providers.push({ provide: RandomSource, useClass: extensions.randomSource });
  if (extensions.alertSink) providers.push({ provide: AlertSink, useClass: extensions.alertSink });
  return providers;
}
