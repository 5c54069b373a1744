import type { Response } from 'express';

/**
 * Only this origin's scripts, styles and forms; no inline script, no eval
 * (htmx runs with allowEval off), no framing: an injected tag that escaping
 * missed still runs nothing.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/** Set on every HTML answer of the console. */
export function setConsoleHeaders(response: Response): void {
  response.setHeader('Content-Security-Policy', CONSOLE_CSP);
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('Referrer-Policy', 'same-origin');
  response.setHeader('Cache-Control', 'no-store');
}
