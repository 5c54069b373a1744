/** A console session as the sign-in form gives a browser: its cookies and the CSRF token. */
export interface AdminSession {
  readonly cookie: string;
  readonly csrf: string;
}

/** Signs in with `token` through the form (same-origin, as a browser posts it). */
export async function signInToAdmin(baseUrl: string, token: string): Promise<AdminSession> {
  const response = await fetch(`${baseUrl}/admin/login`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'sec-fetch-site': 'same-origin',
    },
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  if (response.status !== 303) {
    throw new Error(`sign-in answered ${response.status}, not the 303 to the console`);
  }
  const cookies = response.headers.getSetCookie().map((c) => c.split(';')[0]);
  const csrf = decodeURIComponent(
    (cookies.find((c) => c.startsWith('pin_admin_csrf=')) ?? '').slice('pin_admin_csrf='.length),
  );
  return { cookie: cookies.join('; '), csrf };
}
