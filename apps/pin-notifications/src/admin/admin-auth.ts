import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AdminAccess } from './admin-access';
import { AdminForbiddenError, AdminUnauthorizedError } from './admin-request-errors';
import {
  AdminSessionSigner,
  CSRF_COOKIE,
  SESSION_COOKIE,
  SESSION_TTL_SECONDS,
  newCsrfToken,
  sameText,
} from './admin-session';
import { ADMIN_SETTINGS, type AdminSettings } from './admin-settings';
import { readCookies, setCookie } from './cookies';
import { SignInLimiter } from './sign-in-limiter';

/** Who is asking, and the CSRF token their pages must send back. */
export interface AdminPrincipal {
  readonly actor: string;
  /** Bearer requests (scripts) carry no cookies, so cross-site forgery cannot reach them. */
  readonly via: 'session' | 'bearer' | 'access';
  /** The CSRF token signed into the session; null without one. */
  readonly boundCsrf: string | null;
  /** The CSRF token this request's page embeds in its forms (the double-submit cookie's value). */
  readonly pageCsrf: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Admission to the admin page and API. With the host's AdminAccess, that
 * decides; otherwise ADMIN_TOKEN, as a bearer token (scripts) or exchanged
 * for a signed session cookie at the login form (people). A state-changing
 * request with cookies must come from this origin (Sec-Fetch-Site, else
 * Origin) and carry the CSRF token of the double-submit cookie, which for a
 * session is also the one signed into it.
 */
@Injectable()
export class AdminAuth {
  private readonly signer: AdminSessionSigner | null;
  private readonly signInLimiter: SignInLimiter;

  constructor(
    @Inject(ADMIN_SETTINGS) private readonly settings: AdminSettings,
    @Optional() @Inject(AdminAccess) private readonly access: AdminAccess | null,
  ) {
    this.signer = settings.token ? new AdminSessionSigner(settings.token) : null;
    this.signInLimiter = new SignInLimiter(settings.signInLimit);
  }

  get usesLogin(): boolean {
    return !this.access && this.signer !== null;
  }

  async authenticate(request: Request, response: Response): Promise<AdminPrincipal> {
    const principal = await this.identify(request, response);
    if (!SAFE_METHODS.has(request.method) && principal.via !== 'bearer') {
      this.checkSameOrigin(request);
      const submitted = submittedCsrf(request);
      const cookie = readCookies(request).get(CSRF_COOKIE);
      if (!submitted || !cookie || !sameText(submitted, cookie)) {
        throw new AdminForbiddenError(
          'the CSRF token is missing or does not match: reload the page',
        );
      }
      if (principal.boundCsrf !== null && !sameText(submitted, principal.boundCsrf)) {
        throw new AdminForbiddenError(
          'the CSRF token does not belong to this session: reload the page',
        );
      }
    }
    return principal;
  }

  /** The login form's POST: a token right, a session and its CSRF cookie set. */
  login(request: Request, response: Response, token: unknown): void {
    this.checkSameOrigin(request);
    // The socket's address (no trust proxy): a client cannot pick its own by a header.
    const client = request.ip ?? request.socket.remoteAddress ?? 'unknown';
    this.signInLimiter.check(client);
    if (
      !this.signer ||
      !this.settings.token ||
      typeof token !== 'string' ||
      !sameText(token, this.settings.token)
    ) {
      this.signInLimiter.recordFailure(client);
      throw new AdminUnauthorizedError('wrong admin token');
    }
    this.signInLimiter.recordSuccess(client);
    const { cookie, session } = this.signer.issue();
    setCookie(request, response, SESSION_COOKIE, cookie, {
      httpOnly: true,
      maxAgeSeconds: SESSION_TTL_SECONDS,
    });
    setCookie(request, response, CSRF_COOKIE, session.csrf, {
      httpOnly: false,
      maxAgeSeconds: SESSION_TTL_SECONDS,
    });
  }

  logout(request: Request, response: Response): void {
    setCookie(request, response, SESSION_COOKIE, '', { httpOnly: true, maxAgeSeconds: 0 });
    setCookie(request, response, CSRF_COOKIE, '', { httpOnly: false, maxAgeSeconds: 0 });
  }

  private async identify(request: Request, response: Response): Promise<AdminPrincipal> {
    if (this.access) {
      if (!(await this.access.allows(request)))
        throw new AdminUnauthorizedError('the host refused access');
      // Double-submit without a session: the cookie is set by the first page this browser loads.
      let csrf = readCookies(request).get(CSRF_COOKIE) ?? null;
      if (!csrf && SAFE_METHODS.has(request.method)) {
        csrf = newCsrfToken();
        setCookie(request, response, CSRF_COOKIE, csrf, {
          httpOnly: false,
          maxAgeSeconds: SESSION_TTL_SECONDS,
        });
      }
      return {
        actor: this.access.actor(request),
        via: 'access',
        boundCsrf: null,
        pageCsrf: csrf ?? '',
      };
    }
    if (!this.signer || !this.settings.token)
      throw new AdminUnauthorizedError('the admin page is off');
    const authorization = request.headers.authorization;
    if (authorization?.startsWith('Bearer ')) {
      // A Bearer guess is a sign-in attempt like the form's: the same budget per client address.
      const client = request.ip ?? request.socket.remoteAddress ?? 'unknown';
      this.signInLimiter.check(client);
      if (!sameText(authorization.slice('Bearer '.length), this.settings.token)) {
        this.signInLimiter.recordFailure(client);
        throw new AdminUnauthorizedError('wrong admin token');
      }
      return { actor: 'admin:token', via: 'bearer', boundCsrf: null, pageCsrf: '' };
    }
    const session = this.signer.verify(readCookies(request).get(SESSION_COOKIE));
    if (!session) throw new AdminUnauthorizedError();
    return { actor: 'admin', via: 'session', boundCsrf: session.csrf, pageCsrf: session.csrf };
  }

  checkSameOrigin(request: Request): void {
    const site = request.headers['sec-fetch-site'];
    if (site !== undefined) {
      if (site !== 'same-origin' && site !== 'none') {
        throw new AdminForbiddenError(
          `cross-site request refused (Sec-Fetch-Site: ${String(site)})`,
        );
      }
      return;
    }
    const origin = request.headers.origin;
    if (origin !== undefined) {
      const host = request.headers.host;
      let originHost: string | null = null;
      try {
        originHost = new URL(origin).host;
      } catch {
        originHost = null;
      }
      if (!host || originHost !== host) {
        throw new AdminForbiddenError(`cross-origin request refused (Origin: ${origin})`);
      }
    }
  }
}

function submittedCsrf(request: Request): string | null {
  const header = request.headers['x-csrf-token'];
  if (typeof header === 'string' && header !== '') return header;
  const body = request.body as Record<string, unknown> | undefined;
  const field = body?._csrf;
  return typeof field === 'string' && field !== '' ? field : null;
}
