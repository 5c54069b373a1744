import type { Request, Response } from 'express';

/** The request's cookies (no cookie-parser needed for two cookies). */
export function readCookies(request: Request): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    try {
      cookies.set(part.slice(0, eq).trim(), decodeURIComponent(part.slice(eq + 1).trim()));
    } catch {
      // A malformed value is the same as none.
    }
  }
  return cookies;
}

export interface CookieOptions {
  readonly httpOnly: boolean;
  readonly maxAgeSeconds: number;
}

/** SameSite=Strict and Path=/admin always; Secure when the request came over HTTPS (also behind a proxy that says so). */
export function setCookie(
  request: Request,
  response: Response,
  name: string,
  value: string,
  options: CookieOptions,
): void {
  const secure = request.secure || request.headers['x-forwarded-proto'] === 'https';
  const attributes = [
    `${name}=${encodeURIComponent(value)}`,
    'Path=/admin',
    'SameSite=Strict',
    `Max-Age=${options.maxAgeSeconds}`,
    ...(options.httpOnly ? ['HttpOnly'] : []),
    ...(secure ? ['Secure'] : []),
  ];
  response.append('Set-Cookie', attributes.join('; '));
}
