import type { Request } from 'express';

/**
 * The host's own admission to the admin page and API (SSO, a VPN header, an
 * internal gateway), as a DI token: provide a subclass in
 * `AppModule.forRoot({ admin: { access } })` and the page is on, guarded by
 * it instead of ADMIN_TOKEN. State-changing requests still need the CSRF token
 * and a same-origin request.
 */
export abstract class AdminAccess {
  abstract allows(request: Request): boolean | Promise<boolean>;

  /** Who the audit records for this request; override to name the person. */
  actor(request: Request): string {
    void request;
    return 'admin';
  }
}
