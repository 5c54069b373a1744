import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { insertChannel } from './support/fixtures';
import { startHostApp, type HostTestApp } from './support/host-test-app';
import { insertTerminal, operatorActions, statusCounts } from './support/operations-fixtures';
import { ScriptedProviderAdapter } from './support/scripted-provider-adapter';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const TOKEN = 'chromium-admin-token-0123456789';
/** Debian's chromium (scripts/install-test-tools.sh installs it): playwright-core downloads no browser. */
const CHROMIUM = '/usr/bin/chromium';

describe('admin page in headless Chromium (host app, real PostgreSQL)', () => {
  let db: TestDatabase;
  let host: HostTestApp;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    db = await createTestDatabase();
    host = await startHostApp({
      databaseUrl: db.url,
      retryWorker: { enabled: false, concurrency: 1 },
      adapters: [ScriptedProviderAdapter],
      admin: { token: TOKEN },
    });
    await insertChannel(host.dataSource, { key: 'email' });
    await insertChannel(host.dataSource, { key: 'sms' });
    profile = await mkdtemp(join(tmpdir(), 'pin-admin-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
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
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
    await host?.close();
    await db?.drop();
  });

  it('signs in, filters, previews a redrive, redrives, and shows the rows changed', async () => {
    for (let i = 0; i < 3; i++) {
      await insertTerminal(host.dataSource, {
        channel: 'email',
        errorCode: 'provider_unavailable',
        address: `pat${i}@example.com`,
      });
    }
    await insertTerminal(host.dataSource, {
      channel: 'email',
      errorCode: 'invalid_address',
      address: 'nobody@example.com',
    });
    await insertTerminal(host.dataSource, {
      channel: 'sms',
      errorCode: 'provider_unavailable',
      address: '+447700900123',
    });

    await page.goto(`${host.baseUrl}/admin`);
    await page.fill('input[name="token"]', TOKEN);
    await Promise.all([
      page.waitForURL(`${host.baseUrl}/admin`),
      page.click('button[type="submit"]'),
    ]);
    await page.waitForSelector('#channels');
    expect(await page.locator('#terminal tbody tr').count()).toBe(5);
    const all = await page.content();
    expect(all).not.toMatch(/pat\d@example|nobody@example|447700900123/);
    expect(all).toMatch(/p\*\*\*@\*\*\*\.com/);

    // Filter: the email rows the provider outage left terminal.
    await page.fill('#filter input[name="channel"]', 'email');
    await page.fill('#filter input[name="errorCode"]', 'provider_unavailable');
    await Promise.all([
      page.waitForURL(/errorCode=provider_unavailable/),
      page.click('#filter button'),
    ]);
    expect(await page.locator('#terminal tbody tr').count()).toBe(3);
    expect(await page.locator('#stats tbody tr').count()).toBe(1);

    // Dry run first: nothing changes.
    const before = await statusCounts(host.dataSource);
    await Promise.all([page.waitForURL(/\/admin\/redrive/), page.click('#preview-redrive')]);
    expect(await page.textContent('#preview-summary')).toMatch(/^3 row\(s\) would be redriven/);
    expect(await statusCounts(host.dataSource)).toEqual(before);

    // Confirm with a reason.
    await page.fill('input[name="reason"]', 'provider back after INC-1');
    await Promise.all([page.waitForURL(/notice=/), page.click('#confirm-redrive')]);
    expect(await page.textContent('[role="status"]')).toMatch(/Redriven 3 row\(s\)/);
    expect(await page.locator('#terminal tbody tr').count()).toBe(0);
    expect(await statusCounts(host.dataSource)).toEqual({ terminal: 2, retrying: 3 });

    // Pause and resume a channel from the page.
    await page.fill('input[aria-label="Channel to pause"]', 'sms');
    await page.fill('input[aria-label="Pause reason"]', 'provider maintenance');
    await Promise.all([page.waitForURL(/notice=Paused/), page.click('text=Pause channel')]);
    expect(await page.locator('[data-paused="sms"]').count()).toBe(1);
    await page.fill('input[aria-label="Resume reason for sms"]', 'maintenance over');
    await Promise.all([
      page.waitForURL(/notice=Resumed/),
      page.click('[data-paused="sms"] button'),
    ]);
    expect(await page.locator('[data-paused]').count()).toBe(0);

    expect(
      (await operatorActions(host.dataSource)).map((a) => [a.action, a.actor, a.rows]),
    ).toEqual([
      ['redrive', 'admin', 3],
      ['channel-pause', 'admin', 0],
      ['channel-resume', 'admin', 0],
    ]);
  }, 120_000);
});
