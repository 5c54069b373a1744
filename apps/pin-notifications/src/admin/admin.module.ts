import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { AdminAccess } from './admin-access';
import { AdminApiController } from './admin-api.controller';
import { AdminAssetsController } from './admin-assets.controller';
import { AdminAuth } from './admin-auth';
import { AdminPageController } from './admin-page.controller';
import { ChannelOverview } from './channel-overview';
import { ConsoleOperations } from './console-operations';
import { ADMIN_SETTINGS, type AdminModuleOptions } from './admin-settings';
import { DEFAULT_SIGN_IN_LIMIT } from './sign-in-limiter';

/**
 * The admin page (/admin) and API (/admin/api). Registered only when ADMIN_TOKEN
 * is set or the host provides AdminAccess: otherwise the routes do not exist.
 * Uses the retry module's operation services (the module is global in the host).
 */
@Module({})
export class AdminModule {
  static forRoot(options: AdminModuleOptions): DynamicModule {
    const providers: Provider[] = [
      {
        provide: ADMIN_SETTINGS,
        useValue: {
          token: options.token ?? null,
          signInLimit: options.signInLimit ?? DEFAULT_SIGN_IN_LIMIT,
        },
      },
      AdminAuth,
      ConsoleOperations,
      ChannelOverview,
    ];
    if (options.access) providers.push(options.access);
    return {
      module: AdminModule,
      controllers: [AdminAssetsController, AdminPageController, AdminApiController],
      providers,
    };
  }

  /** On when there is a token or the host's AdminAccess. */
  static isEnabled(options: AdminModuleOptions | undefined): boolean {
    return Boolean(options?.token || options?.access);
  }
}

export { AdminAccess };
