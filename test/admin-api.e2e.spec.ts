import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AdminAccess } from '../apps/pin-notifications/src/admin/admin-access';
import { insertChannel } from './support/fixtures';
import { startHostApp, type HostTestApp } from './support/host-test-app';
import { insertTerminal, operatorActions } from './support/operations-fixtures';
import { ScriptedProviderAdapter } from './support/scripted-provider-adapter';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const TOKEN = 'test-admin-token-0123456789abcdef';

/** A session as the login form gives a browser: its cookies and the CSRF token. */
async function signIn(baseUrl: string): Promise<{ cookie: string; csrf: string }> {
  const response = await fetch(`${baseUrl}/admin/login`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'sec-fetch-site': 'same-origin',
    },
    body: new URLSearchParams({ token: TOKEN }),
    redirect: 'manual',
  });
  expect(response.status).toBe(303);
  const cookies = response.headers.getSetCookie().map((c) => c.split(';')[0]);
  const csrf = decodeURIComponent(
    (cookies.find((c) => c.startsWith('pin_admin_csrf=')) ?? '').slice('pin_admin_csrf='.length),
  );
  return { cookie: cookies.join('; '), csrf };
}

describe('admin API and page: access and cross-site protection (host app, real PostgreSQL)', () => {
  let db: TestDatabase;
  let host: HostTestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    host = await startHostApp({
      databaseUrl: db.url,
      retryWorker: { enabled: false, concurrency: 1 },
      adapters: [ScriptedProviderAdapter],
      admin: { token: TOKEN },
    });
    await insertChannel(host.dataSource, { key: 'email' });
  });

  afterAll(async () => {
    await host?.close();
    await db?.drop();
  });

  it('refuses every route without a session or token: 401, the page shows the login form', async () => {
    for (const path of ['/admin/api/status', '/admin/api/terminal', '/admin/api/terminal/stats']) {
      const response = await fetch(`${host.baseUrl}${path}`);
      expect(response.status).toBe(401);
    }
    const wrong = await fetch(`${host.baseUrl}/admin/api/status`, {
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.status).toBe(401);
    const post = await fetch(`${host.baseUrl}/admin/api/channels/email/pause`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'x' }),
    });
    expect(post.status).toBe(401);
    const page = await fetch(`${host.baseUrl}/admin`);
    expect(page.status).toBe(401);
    expect(await page.text()).toMatch(/name="token"/);
    const login = await fetch(`${host.baseUrl}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'wrong-token-wrong-token-wrong' }),
      redirect: 'manual',
    });
    expect(login.status).toBe(401);
    expect(login.headers.getSetCookie()).toEqual([]);
    expect(await operatorActions(host.dataSource)).toEqual([]);
  });

  it('answers a bearer token (scripts) with masked rows and no personal data', async () => {
    await insertTerminal(host.dataSource, {
      channel: 'email',
      address: 'secret.person@example.com',
      errorCode: 'bounced',
    });
    const response = await fetch(`${host.baseUrl}/admin/api/terminal?channel=email`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/s\*\*\*@\*\*\*\.com/);
    expect(text).not.toMatch(/secret\.person|Hello|Your statement/);
    // A text another writer stored as the provider sent it goes out redacted too.
    await insertTerminal(host.dataSource, {
      channel: 'sms',
      address: '+15551234567',
      errorCode: 'rejected',
      errorMessage: 'recipient +15551234567 rejected the message',
    });
    const sms = await fetch(`${host.baseUrl}/admin/api/terminal?channel=sms`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const smsText = await sms.text();
    expect(smsText).toContain('[redacted]');
    expect(smsText).not.toMatch(/5551234567/);
    const bad = await fetch(`${host.baseUrl}/admin/api/terminal?since=yesterday`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(bad.status).toBe(400);
  });

  it('refuses a state change without the CSRF token, with a wrong one, or from another site: 403, nothing changed', async () => {
    const { cookie, csrf } = await signIn(host.baseUrl);
    const pause = (headers: Record<string, string>) =>
      fetch(`${host.baseUrl}/admin/api/channels/email/pause`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, ...headers },
        body: JSON.stringify({ reason: 'outage' }),
      });

    expect((await pause({})).status).toBe(403);
    expect((await pause({ 'x-csrf-token': 'forged' })).status).toBe(403);
    expect((await pause({ 'x-csrf-token': csrf, 'sec-fetch-site': 'cross-site' })).status).toBe(
      403,
    );
    expect((await pause({ 'x-csrf-token': csrf, origin: 'https://evil.example' })).status).toBe(
      403,
    );
    // A form posted from another site: the browser sends the cookies, never the token.
    const form = await fetch(`${host.baseUrl}/admin/channels/pause`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie,
        'sec-fetch-site': 'cross-site',
      },
      body: new URLSearchParams({ channel: 'email', reason: 'x', _csrf: csrf }),
      redirect: 'manual',
    });
    expect(form.status).toBe(403);
    expect(await operatorActions(host.dataSource)).toEqual([]);

    const ok = await pause({ 'x-csrf-token': csrf, 'sec-fetch-site': 'same-origin' });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ channel: 'email', changed: true, paused: true });
    const resume = await fetch(`${host.baseUrl}/admin/api/channels/email/resume`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ reason: 'back' }),
    });
    expect(resume.status).toBe(200);
    expect((await operatorActions(host.dataSource)).map((a) => [a.action, a.actor])).toEqual([
      ['channel-pause', 'admin'],
      ['channel-resume', 'admin:token'],
    ]);
  });

  it('maps bad input to 400 and a refusal to 409', async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${host.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(body),
      });
    expect((await post('/admin/api/redrive', {})).status).toBe(400);
    expect((await post('/admin/api/redrive', { channel: 'email', dryRun: false })).status).toBe(
      400,
    );
    expect((await post('/admin/api/channels/nope/pause', { reason: 'x' })).status).toBe(409);
    const preview = await post('/admin/api/redrive', { channel: 'email' });
    expect(await preview.json()).toMatchObject({ dryRun: true });
  });
});

describe('admin page: off by default, or admitted by the host', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(() => db?.drop());

  it('has no routes without ADMIN_TOKEN or AdminAccess, and follows a host AdminAccess', async () => {
    @Injectable()
    class HeaderAccess extends AdminAccess {
      allows(request: Request): boolean {
        return request.headers['x-internal-user'] === 'ops-lead';
      }

      override actor(): string {
        return 'sso:ops-lead';
      }
    }
    const host = await startHostApp({
      databaseUrl: db.url,
      retryWorker: { enabled: false, concurrency: 1 },
      admin: { access: { provide: AdminAccess, useClass: HeaderAccess } },
    });
    try {
      expect((await fetch(`${host.baseUrl}/admin/api/status`)).status).toBe(401);
      const allowed = await fetch(`${host.baseUrl}/admin/api/status`, {
        headers: { 'x-internal-user': 'ops-lead' },
      });
      expect(allowed.status).toBe(200);
    } finally {
      await host.close();
    }
    const off = await startHostApp({
      databaseUrl: db.url,
      retryWorker: { enabled: false, concurrency: 1 },
    });
    try {
      expect((await fetch(`${off.baseUrl}/admin`)).status).toBe(404);
      expect((await fetch(`${off.baseUrl}/admin/api/status`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
