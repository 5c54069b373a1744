import { ConfigurableModuleBuilder } from '@nestjs/common';
import { extensionProviders } from './extensions/extension-providers';
import type { NotificationsRetryExtensions } from './extensions/notifications-retry-extensions';
import type { NotificationsRetryModuleOptions } from './options/notifications-retry-options';
import { notificationsRetryDataSourceProvider } from './persistence/notifications-retry-data-source';

interface NotificationsRetryExtras {
  isGlobal?: boolean;
  extensions?: NotificationsRetryExtensions;
  /**
   * The name of the host's TypeORM DataSource to use (the `name` given to
   * `TypeOrmModule.forRoot`). Default: the default DataSource. An extra, not an
   * option: which database the module works on is part of how the app is
   * wired, and Nest must know the token before any option factory runs.
   */
  dataSource?: string;
}

export const {
  ConfigurableModuleClass: ConfigurableNotificationsRetryModule,
  MODULE_OPTIONS_TOKEN: NOTIFICATIONS_RETRY_MODULE_OPTIONS,
  OPTIONS_TYPE: NOTIFICATIONS_RETRY_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: NOTIFICATIONS_RETRY_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<NotificationsRetryModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras<NotificationsRetryExtras>(
    { isGlobal: false, extensions: {}, dataSource: undefined },
    (definition, extras) => ({
      ...definition,
      global: extras.isGlobal,
      // Later providers win over the module's defaults registered under the same token.
      providers: [
        ...(definition.providers ?? []),
        notificationsRetryDataSourceProvider(extras.dataSource),
        ...extensionProviders(extras.extensions),
      ],
    }),
  )
  .build();
