import type { Provider } from '@nestjs/common';

/** How the admin page is admitted: a token (ADMIN_TOKEN), or the host's AdminAccess. */
export interface AdminSettings {
  readonly token: string | null;
}

export const ADMIN_SETTINGS = Symbol('ADMIN_SETTINGS');

/** What `AppModule.forRoot({ admin })` takes; no token and no access = the admin page is off. */
export interface AdminModuleOptions {
  readonly token?: string | null;
  /** A provider for `AdminAccess` (useClass, useFactory, …). */
  readonly access?: Provider;
}
