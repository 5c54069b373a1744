import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { AdminAccess } from './admin-access';
import { AdminApiController } from './admin-api.controller';
import { AdminAuth } from './admin-auth';
import { AdminPageController } from './admin-page.controller';
import { ADMIN_SETTINGS, type AdminModuleOptions } from './admin-settings';

/**
 * The admin page (/admin) and API (/admin/api). Registered only when ADMIN_TOKEN
 * is set or the host provides AdminAccess: otherwise the routes do not exist.
 * Uses the retry module's operation services (the module is global in the host).
 */
@Module({})
export class AdminModule {
  static forRoot(options: AdminModuleOptions): DynamicModule {
    const providers: Provider[] = [
      { provide: ADMIN_SETTINGS, useValue: { token: options.token ?? null } },
      AdminAuth,
    ];
    if (options.access) providers.push(options.access);
    return {
      module: AdminModule,
      controllers: [AdminPageController, AdminApiController],
      providers,
    };
  }

  /** On when there is a token or the host's AdminAccess. */
  static isEnabled(options: AdminModuleOptions | undefined): boolean {
    return Boolean(options?.token || options?.access);
  }
}

export { AdminAccess };
