import { AdminSessionSigner, SESSION_TTL_SECONDS, sameText } from './admin-session';

describe('AdminSessionSigner', () => {
  const signer = new AdminSessionSigner('an-admin-token-of-enough-length');
  const now = 1_800_000_000;

  it('verifies the sessions it issued until they expire', () => {
    const { cookie, session } = signer.issue(now);
    expect(signer.verify(cookie, now + 60)).toEqual(session);
    expect(signer.verify(cookie, now + SESSION_TTL_SECONDS)).toBeNull();
  });

  it('refuses a tampered payload, a forged signature, another token and garbage', () => {
    const { cookie } = signer.issue(now);
    const [payload, signature] = cookie.split('.') as [string, string];
    const longer = Buffer.from(
      JSON.stringify({ exp: now + 10 * SESSION_TTL_SECONDS, csrf: 'x' }),
    ).toString('base64url');
    expect(signer.verify(`${longer}.${signature}`, now)).toBeNull();
    expect(signer.verify(`${payload}.${signature.slice(1)}A`, now)).toBeNull();
    expect(
      new AdminSessionSigner('another-admin-token-of-enough-len').verify(cookie, now),
    ).toBeNull();
    for (const bad of [undefined, '', 'abc', 'a.b.c', `${payload}.`])
      expect(signer.verify(bad, now)).toBeNull();
  });

  it('compares texts of different lengths without throwing', () => {
    expect(sameText('abc', 'abc')).toBe(true);
    expect(sameText('abc', 'abcd')).toBe(false);
  });
});
