import type { Provider } from '@nestjs/common';
import type { SignInLimit } from './sign-in-limiter';

/** How the admin page is admitted: a token (ADMIN_TOKEN), or the host's AdminAccess. */
export interface AdminSettings {
  readonly token: string | null;
  readonly signInLimit: SignInLimit;
}

export const ADMIN_SETTINGS = Symbol('ADMIN_SETTINGS');

/** What `AppModule.forRoot({ admin })` takes; no token and no access = the admin page is off. */
export interface AdminModuleOptions {
  readonly token?: string | null;
  /** A provider for `AdminAccess` (useClass, useFactory, …). */
  readonly access?: Provider;
  /** Failed sign-ins allowed per client address (default 5 per 15 min), then 429 with Retry-After. */
  readonly signInLimit?: SignInLimit;
}
