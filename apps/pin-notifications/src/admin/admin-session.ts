import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'pin_admin_session';
export const CSRF_COOKIE = 'pin_admin_csrf';
export const SESSION_TTL_SECONDS = 8 * 3600;

export interface AdminSession {
  /** Expiry, Unix seconds. */
  readonly exp: number;
  /** The CSRF token bound to this session (double-submit: cookie + form field or header). */
  readonly csrf: string;
}

/**
 * Signed cookie sessions: `base64url(payload).base64url(HMAC-SHA256)`. The key
 * is derived from ADMIN_TOKEN, so rotating the token ends every session.
 */
export class AdminSessionSigner {
  private readonly key: Buffer;

  constructor(token: string) {
    this.key = createHmac('sha256', token).update('pin-admin-session-v1').digest();
  }

  issue(nowSeconds: number = Math.floor(Date.now() / 1000)): {
    cookie: string;
    session: AdminSession;
  } {
    const session = { exp: nowSeconds + SESSION_TTL_SECONDS, csrf: newCsrfToken() };
    const payload = Buffer.from(JSON.stringify(session)).toString('base64url');
    return { cookie: `${payload}.${this.sign(payload)}`, session };
  }

  verify(
    cookie: string | undefined,
    nowSeconds: number = Math.floor(Date.now() / 1000),
  ): AdminSession | null {
    if (!cookie) return null;
    const [payload, signature, extra] = cookie.split('.');
    if (!payload || !signature || extra !== undefined) return null;
    if (!sameText(signature, this.sign(payload))) return null;
    try {
      const session = JSON.parse(
        Buffer.from(payload, 'base64url').toString('utf8'),
      ) as Partial<AdminSession>;
      if (typeof session.exp !== 'number' || typeof session.csrf !== 'string') return null;
      return session.exp > nowSeconds ? { exp: session.exp, csrf: session.csrf } : null;
    } catch {
      return null;
    }
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}

export function newCsrfToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Constant-time comparison of two texts (a token, a signature). */
export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
