import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AdminAccess } from '../apps/pin-notifications/src/admin/admin-access';
import {
  insertCompletedCycle,
  insertParkedEvent,
  setAttemptHistory,
} from './support/admin-console-fixtures';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  outboxEvents,
  readNotification,
} from './support/fixtures';
import { signInToAdmin, type AdminSession } from './support/admin-sign-in';
import { startHostApp, type HostTestApp } from './support/host-test-app';
import { claimRow, insertTerminal, operatorActions } from './support/operations-fixtures';
import { ScriptedProviderAdapter } from './support/scripted-provider-adapter';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const TOKEN = 'test-admin-token-0123456789abcdef';

const signIn = (baseUrl: string): Promise<AdminSession> => signInToAdmin(baseUrl, TOKEN);

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

/** The fields of the console's JSON answers these tests read. */
interface ConsoleAnswer {
  readonly [field: string]: unknown;
  readonly rows: Array<Record<string, unknown>>;
  readonly next: string | null;
  readonly history: Array<{ outcome: string; httpStatus: number | null }>;
  readonly cycles: Array<{ sent: number }>;
  readonly channels: Array<Record<string, unknown> & { key: string }>;
  readonly unpublished: number;
}

describe("admin API: the console's reads and actions (host app, real PostgreSQL)", () => {
  let db: TestDatabase;
  let host: HostTestApp;
  const get = async (
    path: string,
  ): Promise<{ status: number; body: ConsoleAnswer; text: string }> => {
    const response = await fetch(`${host.baseUrl}${path}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) as ConsoleAnswer, text };
  };
  const post = async (
    path: string,
    body: unknown,
  ): Promise<{ status: number; body: ConsoleAnswer }> => {
    const response = await fetch(`${host.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as ConsoleAnswer };
  };
  const PERSONAL = /person-|secret|example\.com|Your statement|Hello/;

  beforeAll(async () => {
    db = await createTestDatabase();
    host = await startHostApp({
      databaseUrl: db.url,
      retryWorker: { enabled: false, concurrency: 1 },
      adapters: [ScriptedProviderAdapter],
      admin: { token: TOKEN },
    });
    await insertChannel(host.dataSource, { key: 'email', rateLimitPerSec: 20 });
    await insertChannel(host.dataSource, { key: 'sms', isEnabled: false });
  });

  afterAll(async () => {
    await host?.close();
    await db?.drop();
  });

  it('counts rows per channel and state, and lists a state page by page with the cursor, masked', async () => {
    const now = new Date();
    for (let i = 0; i < 3; i++) {
      await insertNotification(host.dataSource, {
        status: 'Pending',
        channel: 'email',
        scheduledAt: minutesAgo(now, 10 - i),
        recipientAddress: `secret${i}@example.com`,
      });
    }
    await insertNotification(host.dataSource, {
      status: 'Pending',
      channel: 'email',
      scheduledAt: new Date(now.getTime() + 3_600_000),
    });
    await insertNotification(host.dataSource, {
      status: 'Failed',
      channel: 'sms',
      attempts: 1,
      nextAttemptAt: new Date(now.getTime() + 600_000),
    });
    await insertNotification(host.dataSource, {
      status: 'Sent',
      channel: 'email',
      sentAt: minutesAgo(now, 5),
    });

    const counts = await get('/admin/api/counts');
    expect(counts.status).toBe(200);
    expect(counts.body.counts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ channel: 'email', due: 3, deferred: 1, sentLastHour: 1 }),
        expect.objectContaining({ channel: 'sms', retrying: 1 }),
      ]),
    );

    const first = await get('/admin/api/notifications?state=due&channel=email&limit=2');
    expect(first.status).toBe(200);
    expect(first.body.rows).toHaveLength(2);
    expect(first.body.next).toEqual(expect.any(String));
    expect(first.text).not.toMatch(PERSONAL);
    expect(first.body.rows[0].maskedAddress).toMatch(/^s\*\*\*@\*\*\*\.com$/);
    expect(Object.keys(first.body.rows[0]).sort()).toEqual(
      [
        'attempts',
        'channel',
        'claimedUntil',
        'dueAt',
        'errorCode',
        'id',
        'maskedAddress',
        'status',
        'updatedAt',
      ].sort(),
    );
    const second = await get(
      `/admin/api/notifications?state=due&channel=email&limit=2&after=${encodeURIComponent(first.body.next ?? '')}`,
    );
    expect(second.body.rows).toHaveLength(1);
    expect(second.body.next).toBeNull();
    const seen = [...first.body.rows, ...second.body.rows].map((r) => r.id);
    expect(new Set(seen).size).toBe(3);

    expect((await get('/admin/api/notifications?state=sent')).body.rows).toHaveLength(1);
    expect((await get('/admin/api/notifications?state=everything')).status).toBe(400);
    expect((await get('/admin/api/notifications?state=due&limit=201')).status).toBe(400);
  });

  it('shows one notification with its attempt history, masked and redacted; 404 for an unknown id', async () => {
    const id = await insertTerminal(host.dataSource, {
      channel: 'email',
      address: 'secret.history@example.com',
      errorCode: 'provider_unavailable',
    });
    await setAttemptHistory(host.dataSource, id, [
      { outcome: 'retried', errorCode: 'provider_unavailable', httpStatus: 503, latencyMs: 120 },
      { outcome: 'retried', errorCode: 'timeout', latencyMs: 2000 },
      { outcome: 'terminal', errorCode: 'provider_unavailable', httpStatus: 503, latencyMs: 95 },
    ]);
    const detail = await get(`/admin/api/notifications/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.text).not.toMatch(PERSONAL);
    expect(detail.body).toMatchObject({ id, status: 'Failed', attempts: 3 });
    expect(detail.body.history.map((h) => [h.outcome, h.httpStatus])).toEqual([
      ['retried', 503],
      ['retried', null],
      ['terminal', 503],
    ]);
    const unknown = await get('/admin/api/notifications/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
  });

  it('discards rows: a dry run changes nothing, the real one needs a reason, is audited and writes the Failed event', async () => {
    const keep = await insertNotification(host.dataSource, {
      status: 'Sent',
      channel: 'sms',
      sentAt: new Date(),
    });
    const target = await insertNotification(host.dataSource, {
      status: 'Pending',
      channel: 'sms',
      scheduledAt: new Date(),
    });
    const claimed = await insertNotification(host.dataSource, {
      status: 'Pending',
      channel: 'sms',
      scheduledAt: new Date(),
    });
    await claimRow(host.dataSource, claimed);

    const dry = await post('/admin/api/discard', { ids: [keep, target, claimed] });
    expect(dry).toEqual({ status: 200, body: { dryRun: true, rows: 1 } });
    expect((await readNotification(host.dataSource, target)).status).toBe('Pending');

    expect((await post('/admin/api/discard', { ids: [target], dryRun: false })).status).toBe(400);
    expect((await post('/admin/api/discard', { dryRun: true })).status).toBe(400);

    const real = await post('/admin/api/discard', {
      ids: [keep, target, claimed],
      dryRun: false,
      reason: 'customer asked us not to send',
    });
    expect(real.status).toBe(200);
    expect(real.body).toMatchObject({ dryRun: false, rows: 1, actionId: expect.any(String) });
    const row = await readNotification(host.dataSource, target);
    expect([row.status, row.next_attempt_at, row.last_error_code]).toEqual([
      'Failed',
      null,
      'operator_discarded',
    ]);
    expect((await readNotification(host.dataSource, keep)).status).toBe('Sent');
    expect((await readNotification(host.dataSource, claimed)).status).toBe('Pending');
    expect((await outboxEvents(host.dataSource, target)).map((e) => e.payload.status)).toEqual([
      'Failed',
    ]);
    const audit = await get('/admin/api/audit?action=discard&text=NOT%20TO%20SEND');
    expect(audit.body.rows).toEqual([
      expect.objectContaining({ action: 'discard', actor: 'admin:token', rows: 1 }),
    ]);
    expect((await get('/admin/api/audit?text=no-such-reason')).body.rows).toEqual([]);
  });

  it('lists parked outbox events and re-queues one (audited); a second re-queue is refused', async () => {
    const id = await insertNotification(host.dataSource, {
      status: 'Sent',
      channel: 'email',
      sentAt: new Date(),
    });
    const eventId = await insertParkedEvent(host.dataSource, id);
    const parked = await get('/admin/api/outbox?state=parked');
    expect(parked.status).toBe(200);
    expect(parked.body.rows).toEqual([
      expect.objectContaining({
        id: eventId,
        messageKey: id,
        attempts: 12,
        lastError: 'nats: 503 no responders',
      }),
    ]);
    expect(parked.text).not.toMatch(/notificationId/);
    const before = (await get('/admin/api/outbox/counts')).body;
    expect(before).toMatchObject({ parked: 1 });

    expect((await post(`/admin/api/outbox/${eventId}/requeue`, {})).status).toBe(400);
    const requeued = await post(`/admin/api/outbox/${eventId}/requeue`, { reason: 'NATS is back' });
    expect(requeued.status).toBe(200);
    expect(requeued.body).toMatchObject({ requeued: eventId, actionId: expect.any(String) });
    expect((await get('/admin/api/outbox/counts')).body).toMatchObject({
      parked: 0,
      unpublished: before.unpublished + 1,
    });
    expect((await post(`/admin/api/outbox/${eventId}/requeue`, { reason: 'again' })).status).toBe(
      409,
    );
    expect((await get('/admin/api/audit?action=outbox-requeue')).body.rows).toHaveLength(1);
  });

  it('lists the last cycles, and the channels with provider, limits, pause and waiting rows', async () => {
    await insertCompletedCycle(host.dataSource, {
      minutesAgo: 3,
      sent: 4,
      retried: 1,
      terminal: 0,
    });
    await insertCompletedCycle(host.dataSource, {
      minutesAgo: 1,
      sent: 2,
      retried: 0,
      terminal: 1,
    });
    await insertCompletedCycle(host.dataSource, {
      minutesAgo: 60 * 30,
      sent: 9,
      retried: 9,
      terminal: 9,
    });
    const cycles = await get('/admin/api/cycles?hours=2');
    expect(cycles.status).toBe(200);
    expect(cycles.body.cycles.map((c) => c.sent)).toEqual([2, 4]);
    expect((await get('/admin/api/cycles?hours=49')).status).toBe(400);

    await post('/admin/api/channels/sms/pause', { reason: 'provider maintenance' });
    const channels = await get('/admin/api/channels');
    expect(channels.status).toBe(200);
    const byKey = Object.fromEntries(channels.body.channels.map((c) => [c.key, c]));
    expect(byKey.email).toMatchObject({ enabled: true, provider: 'scripted', pause: null });
    expect(byKey.email.limits).toContain('20/s');
    expect(byKey.sms).toMatchObject({
      enabled: false,
      pause: expect.objectContaining({ reason: 'provider maintenance' }),
    });
    expect(byKey.sms.waiting).toBeGreaterThan(0);
  });
});
