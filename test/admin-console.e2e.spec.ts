import { insertChannel, insertNotification, readNotification } from './support/fixtures';
import { signInToAdmin } from './support/admin-sign-in';
import { startHostApp, type HostTestApp } from './support/host-test-app';
import { insertTerminal, operatorActions } from './support/operations-fixtures';
import { ScriptedProviderAdapter } from './support/scripted-provider-adapter';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const TOKEN = 'console-admin-token-0123456789abc';

const signIn = async (baseUrl: string): Promise<string> =>
  (await signInToAdmin(baseUrl, TOKEN)).cookie;

/** The host app with the console on: a token, a sign-in limit of 3 failures a minute, no worker. */
const startConsoleHost = (databaseUrl: string): Promise<HostTestApp> =>
  startHostApp({
    databaseUrl,
    retryWorker: { enabled: false, concurrency: 1 },
    adapters: [ScriptedProviderAdapter],
    admin: { token: TOKEN, signInLimit: { maxFailures: 3, windowMs: 60_000 } },
  });

describe('operator console pages (host app, real PostgreSQL)', () => {
  let db: TestDatabase;
  let host: HostTestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    host = await startConsoleHost(db.url);
    await insertChannel(host.dataSource, { key: 'email' });
    await insertTerminal(host.dataSource, {
      channel: 'email',
      errorCode: 'bounced',
      address: 'secret.person@example.com',
    });
  });

  afterAll(async () => {
    await host?.close();
    await db?.drop();
  });

  it('renders every page from its template, with no personal data and the kept libraries linked', async () => {
    const cookie = await signIn(host.baseUrl);
    for (const path of [
      '/admin',
      '/admin/rows?state=terminal&channel=email',
      '/admin/channels',
      '/admin/cycles?hours=6',
      '/admin/outbox',
      '/admin/audit',
      '/admin/fragments/counts',
    ]) {
      const response = await fetch(`${host.baseUrl}${path}`, { headers: { cookie } });
      const html = await response.text();
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
      expect(html).not.toMatch(/secret\.person|Hello|Your statement/);
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self';");
      if (!path.includes('fragments')) {
        expect(html).toContain('<link rel="stylesheet" href="/admin/assets/pico.css">');
        expect(html).toContain('<script src="/admin/assets/htmx.js" defer></script>');
        expect(html).toContain('aria-current="page"');
      }
    }
    const channels = await (
      await fetch(`${host.baseUrl}/admin/channels`, { headers: { cookie } })
    ).text();
    expect(channels).toMatch(/<tr id="channel-email" data-channel="email">/);
    expect(channels).toContain('hx-trigger="every 5s"');
  });

  it('escapes what a request puts on the page (the notice of a redirect)', async () => {
    const cookie = await signIn(host.baseUrl);
    const response = await fetch(
      `${host.baseUrl}/admin/channels?notice=${encodeURIComponent('<script>alert(1)</script>')}`,
      { headers: { cookie } },
    );
    const html = await response.text();
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('serves the libraries from node_modules, not a CDN, and nothing off its list', async () => {
    for (const [name, type, marker] of [
      ['pico.css', 'text/css', 'Pico CSS'],
      ['htmx.js', 'text/javascript', 'htmx'],
      ['uplot.js', 'text/javascript', 'uPlot'],
      ['uplot.css', 'text/css', '.uplot'],
      ['console.js', 'text/javascript', 'cycles-chart'],
      ['console.css', 'text/css', 'dl.facts'],
    ] as const) {
      const response = await fetch(`${host.baseUrl}/admin/assets/${name}`);
      expect({ name, status: response.status }).toEqual({ name, status: 200 });
      expect(response.headers.get('content-type')).toContain(type);
      expect(await response.text()).toContain(marker);
    }
    expect((await fetch(`${host.baseUrl}/admin/assets/..%2Fadmin.module.ts`)).status).toBe(404);
    expect((await fetch(`${host.baseUrl}/admin/assets/package.json`)).status).toBe(404);
  });

  it('refuses every console action without the CSRF token or from another site: 403, nothing changed', async () => {
    const cookie = await signIn(host.baseUrl);
    const csrf = decodeURIComponent(/pin_admin_csrf=([^;]+)/.exec(cookie)?.[1] ?? '');
    const id = '00000000-0000-4000-8000-000000000001';
    for (const path of [
      '/admin/bulk',
      `/admin/notifications/${id}/discard`,
      `/admin/notifications/${id}/redrive`,
      `/admin/outbox/${id}/requeue`,
      '/admin/channels/pause',
    ]) {
      const form = { action: 'discard', channel: 'email', reason: 'forged', ids: id };
      const noToken = await fetch(`${host.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams(form),
        redirect: 'manual',
      });
      const crossSite = await fetch(`${host.baseUrl}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie,
          'sec-fetch-site': 'cross-site',
        },
        body: new URLSearchParams({ ...form, _csrf: csrf }),
        redirect: 'manual',
      });
      expect({ path, statuses: [noToken.status, crossSite.status] }).toEqual({
        path,
        statuses: [403, 403],
      });
    }
    expect(await operatorActions(host.dataSource)).toEqual([]);
  });

  it('a bulk discard that would end more rows than its dry run showed is refused: 409, nothing discarded', async () => {
    const { cookie, csrf } = await signInToAdmin(host.baseUrl, TOKEN);
    const retrying = () =>
      insertNotification(host.dataSource, {
        channel: 'email',
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: new Date(Date.now() + 3_600_000),
      });
    const shown = await retrying();
    const dryRun = await fetch(
      `${host.baseUrl}/admin/bulk?action=discard&channel=email&state=retrying`,
      {
        headers: { cookie },
      },
    );
    const previewed = /name="previewed" value="(\d+)"/.exec(await dryRun.text())?.[1];
    expect(previewed).toBe('1');
    // A row of the filter that arrived after the dry run.
    const arrived = await retrying();
    const confirm = (rows: string) =>
      fetch(`${host.baseUrl}/admin/bulk`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'sec-fetch-site': 'same-origin',
          cookie,
        },
        body: new URLSearchParams({
          _csrf: csrf,
          action: 'discard',
          channel: 'email',
          state: 'retrying',
          reason: 'spam campaign',
          previewed: rows,
        }),
        redirect: 'manual',
      });
    expect((await confirm(previewed!)).status).toBe(409);
    for (const id of [shown, arrived]) {
      expect((await readNotification(host.dataSource, id)).last_error_code).not.toBe(
        'operator_discarded',
      );
    }
    // Confirmed for what matches now, it goes ahead.
    expect((await confirm('2')).status).toBe(303);
    for (const id of [shown, arrived]) {
      expect((await readNotification(host.dataSource, id)).last_error_code).toBe(
        'operator_discarded',
      );
    }
  });

  it('limits failed sign-ins per client address: 429 with Retry-After, even for the right token', async () => {
    const attempt = (token: string) =>
      fetch(`${host.baseUrl}/admin/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
        redirect: 'manual',
      });
    for (let i = 0; i < 3; i++) {
      expect((await attempt(`wrong-token-number-${i}-xxxxxxxxxxxx`)).status).toBe(401);
    }
    const limited = await attempt(TOKEN);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.getSetCookie()).toEqual([]);
    expect(await limited.text()).toMatch(/too many failed sign-in attempts/);
  });
});

describe('the sign-in limit covers Bearer tokens too (host app, real PostgreSQL)', () => {
  let db: TestDatabase;
  let host: HostTestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    host = await startConsoleHost(db.url);
  });

  afterAll(async () => {
    await host?.close();
    await db?.drop();
  });

  it('answers wrong Bearer guesses 401 until the budget is used, then 429 with Retry-After, even for the right token', async () => {
    const call = (token: string) =>
      fetch(`${host.baseUrl}/admin/api/status`, { headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < 3; i++) {
      const wrong = await call(`wrong-token-number-${i}-xxxxxxxxxxxx`);
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('cache-control')).toBe('no-store');
    }
    const limited = await call(TOKEN);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });
});
