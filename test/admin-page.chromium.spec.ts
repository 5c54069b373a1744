import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import {
  insertCompletedCycle,
  insertParkedEvent,
  setAttemptHistory,
} from './support/admin-console-fixtures';
import { insertChannel, insertNotification, readNotification } from './support/fixtures';
import { startHostApp, type HostTestApp } from './support/host-test-app';
import { insertTerminal, operatorActions } from './support/operations-fixtures';
import { ScriptedProviderAdapter } from './support/scripted-provider-adapter';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const TOKEN = 'chromium-admin-token-0123456789';
/** Debian's chromium (scripts/install-test-tools.sh installs it): playwright-core downloads no browser. */
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = join(__dirname, 'artifacts', 'console');
const PERSONAL = /pat\d@example|nobody@example|447700900123|Your statement|Hello/;

describe('operator console in headless Chromium (host app, real PostgreSQL)', () => {
  let db: TestDatabase;
  let host: HostTestApp;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  /** Console errors, uncaught exceptions, failed or refused requests of the page, once signed in. */
  const problems: string[] = [];
  let watching = false;

  beforeAll(async () => {
    db = await createTestDatabase();
    host = await startHostApp({
      databaseUrl: db.url,
      retryWorker: { enabled: false, concurrency: 1 },
      adapters: [ScriptedProviderAdapter],
      admin: { token: TOKEN },
    });
    await insertChannel(host.dataSource, { key: 'email', rateLimitPerSec: 10 });
    await insertChannel(host.dataSource, { key: 'sms' });
    await mkdir(SCREENSHOTS, { recursive: true });
    profile = await mkdtemp(join(tmpdir(), 'pin-admin-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1440, height: 900 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(10_000);
    page.on('console', (message) => {
      if (watching && message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => {
      if (watching) problems.push(`page error: ${error.message}`);
    });
    page.on('requestfailed', (request) => {
      // A refresh cut short by leaving the page is the browser's doing, not a fault.
      const aborted =
        request.failure()?.errorText === 'net::ERR_ABORTED' &&
        request.url().includes('/fragments/');
      if (watching && !aborted) {
        problems.push(`failed: ${request.url()} ${request.failure()?.errorText ?? ''}`);
      }
    });
    page.on('response', (response) => {
      if (watching && response.status() >= 400) {
        problems.push(`HTTP ${response.status()}: ${response.url()}`);
      }
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
    await host?.close();
    await db?.drop();
  });

  const shot = (name: string) =>
    page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

  /** Submits a form by its button and waits for the redirect's notice. */
  async function submit(button: string, url: RegExp): Promise<string> {
    await Promise.all([page.waitForURL(url), page.click(button)]);
    return (await page.textContent('[role="status"]')) ?? '';
  }

  it('signs in and walks every page: history, dry run then discard, redrive, pause/resume, outbox re-queue, audit', async () => {
    const now = Date.now();
    const due: string[] = [];
    for (let i = 0; i < 2; i++) {
      due.push(
        await insertNotification(host.dataSource, {
          status: 'Pending',
          channel: 'email',
          recipientAddress: `pat${i}@example.com`,
          scheduledAt: new Date(now - 60_000 * (i + 1)),
        }),
      );
    }
    const terminal = await insertTerminal(host.dataSource, {
      channel: 'sms',
      errorCode: 'provider_unavailable',
      address: '+447700900123',
    });
    await setAttemptHistory(host.dataSource, terminal, [
      { outcome: 'retried', errorCode: 'provider_unavailable', httpStatus: 503, latencyMs: 140 },
      {
        outcome: 'retried',
        errorCode: 'timeout',
        error: 'timed out after 2000 ms',
        latencyMs: 2000,
      },
      { outcome: 'terminal', errorCode: 'provider_unavailable', httpStatus: 503, latencyMs: 90 },
    ]);
    const sent = await insertNotification(host.dataSource, {
      status: 'Sent',
      channel: 'email',
      recipientAddress: 'nobody@example.com',
      sentAt: new Date(now - 120_000),
    });
    const parked = await insertParkedEvent(host.dataSource, sent);
    for (const [minutesAgo, counts] of [
      [50, { sent: 5, retried: 2, terminal: 0 }],
      [30, { sent: 8, retried: 1, terminal: 1 }],
      [10, { sent: 3, retried: 0, terminal: 0 }],
    ] as const) {
      await insertCompletedCycle(host.dataSource, { minutesAgo, ...counts });
    }

    // Sign in (the login page itself answers 401, before the watch starts).
    await page.goto(`${host.baseUrl}/admin`);
    await shot('01-sign-in');
    await page.getByLabel('Admin token').fill(TOKEN);
    await Promise.all([
      page.waitForURL(`${host.baseUrl}/admin`),
      page.click('button[type="submit"]'),
    ]);
    watching = true;

    // Overview: counts per channel × state, refreshed by htmx in place.
    await page.waitForSelector('#counts');
    expect(await page.textContent('#counts [data-channel="email"] [data-count="due"]')).toBe('2');
    await page.waitForResponse((r) => r.url().includes('/admin/fragments/counts'), {
      timeout: 8_000,
    });
    await shot('02-overview');

    // Due rows on email, a selection, a dry run, then the real discard.
    await Promise.all([
      page.waitForURL(/\/admin\/rows\?state=due&channel=email/),
      page.click('#counts [data-channel="email"] [data-count="due"]'),
    ]);
    expect(await page.locator('#rows tbody tr.row').count()).toBe(2);
    await shot('03-rows-due');
    await page.check(`input[name="ids"][value="${due[0]}"]`);
    // The list refreshes every 5 s, but not while a row is ticked: the selection survives.
    await page.waitForTimeout(5_500);
    expect(await page.isChecked(`input[name="ids"][value="${due[0]}"]`)).toBe(true);
    await Promise.all([page.waitForURL(/\/admin\/bulk\?/), page.click('#bulk-discard')]);
    expect(await page.textContent('#preview-summary')).toMatch(/^1 row\(s\) would be discarded/);
    expect((await readNotification(host.dataSource, due[0])).status).toBe('Pending');
    await shot('04-bulk-discard-dry-run');
    await page.getByLabel('Reason (audited)').fill('customer withdrew consent');
    expect(await submit('#confirm-bulk', /notice=/)).toMatch(/Discarded 1 row\(s\)/);
    expect((await readNotification(host.dataSource, due[0])).last_error_code).toBe(
      'operator_discarded',
    );
    expect((await readNotification(host.dataSource, due[1])).status).toBe('Pending');

    // Search by id: the terminal row's page with its attempt history, then a redrive.
    await page.goto(`${host.baseUrl}/admin`);
    await page.getByLabel('Notification id').fill(terminal);
    await Promise.all([
      page.waitForURL(new RegExp(`/admin/notifications/${terminal}`)),
      page.click('form[role="search"] button'),
    ]);
    expect(await page.locator('#history tbody tr').count()).toBe(3);
    expect(await page.textContent('#history')).toContain('timed out after 2000 ms');
    await shot('05-notification');
    await page.getByLabel('Reason for the redrive (audited)').fill('provider back after INC-7');
    expect(await submit('#redrive-one button', /notice=/)).toMatch(/Redriven 1 row\(s\)/);
    expect((await readNotification(host.dataSource, terminal)).next_attempt_at).not.toBeNull();

    // Channels: pause sms with a reason, then resume it.
    await page.click('nav >> text=Channels');
    await page.waitForSelector('#channels');
    expect(await page.textContent('#channel-email')).toContain('10/s');
    // One due Pending row left on email after the discard; the redriven sms row waits for its retry.
    expect(await page.textContent('#channel-email [data-waiting]')).toBe('1');
    expect(await page.textContent('#channel-sms [data-waiting]')).toBe('1');
    await page.getByLabel('Pause sms: reason (audited)').fill('provider maintenance');
    expect(await submit('[data-form="sms"] button', /notice=Paused/)).toMatch(/Paused sms/);
    expect(await page.getAttribute('#channel-sms [data-paused]', 'data-paused')).toBe('yes');
    await shot('06-channels-paused');
    await page.getByLabel('Resume sms: reason (audited)').fill('maintenance over');
    expect(await submit('[data-form="sms"] button', /notice=Resumed/)).toMatch(/Resumed sms/);

    // Cycles: the table and uPlot's chart.
    await page.click('nav >> text=Cycles');
    await page.waitForSelector('#cycles-chart canvas');
    expect(await page.locator('#cycles tbody tr').count()).toBe(3);
    await shot('07-cycles');

    // Outbox: the parked event, re-queued.
    await page.click('nav >> text=Outbox');
    await page.waitForSelector(`[data-event="${parked}"]`);
    await shot('08-outbox-parked');
    await page.getByLabel('Reason (audited)').fill('NATS is back');
    expect(await submit(`[data-event="${parked}"] button`, /notice=Re-queued/)).toMatch(
      /Re-queued event/,
    );
    expect(await page.locator(`[data-event="${parked}"]`).count()).toBe(1);

    // Audit log: every action above, searchable by its reason.
    await page.click('nav >> text=Audit log');
    await page.waitForSelector('#audit');
    expect(await page.locator('#audit tbody tr[data-action]').count()).toBe(5);
    await page.getByLabel('Reason contains').fill('consent');
    await Promise.all([page.waitForURL(/text=consent/), page.click('#audit-filter button')]);
    expect(await page.locator('#audit tbody tr[data-action]').count()).toBe(1);
    await shot('09-audit');

    // Every page above: no personal data, and nothing failed in the browser.
    for (const path of ['/admin', '/admin/rows?state=sent', `/admin/notifications/${sent}`]) {
      await page.goto(`${host.baseUrl}${path}`);
      expect(await page.content()).not.toMatch(PERSONAL);
    }
    await shot('10-notification-sent');
    expect(problems).toEqual([]);
    expect((await operatorActions(host.dataSource)).map((a) => [a.action, a.actor])).toEqual([
      ['discard', 'admin'],
      ['redrive', 'admin'],
      ['channel-pause', 'admin'],
      ['channel-resume', 'admin'],
      ['outbox-requeue', 'admin'],
    ]);
  }, 60_000);
});
