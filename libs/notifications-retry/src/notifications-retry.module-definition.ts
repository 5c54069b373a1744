import { ConfigurableModuleBuilder } from '@nestjs/common';
import { extensionProviders } from './extensions/extension-providers';
import type { NotificationsRetryExtensions } from './extensions/notifications-retry-extensions';
import type { NotificationsRetryModuleOptions } from './options/notifications-retry-options';

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
      providers: [...(definition.providers ?? []), ...extensionProviders(extras.extensions)],
    }),
  )
  .build();

/** Resolved (defaulted, validated) options; inject this rather than the raw token. */
export const RESOLVED_NOTIFICATIONS_RETRY_OPTIONS = Symbol('RESOLVED_NOTIFICATIONS_RETRY_OPTIONS');
