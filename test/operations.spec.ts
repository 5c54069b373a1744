import type { DataSource } from 'typeorm';
import {
  ChannelPauses,
  InvalidOperationInputError,
  LeaseRelease,
  OperationRefusedError,
  OperationsStatus,
  RetryWorkerHealthIndicator,
  TerminalFailures,
  TerminalRedrive,
  maskAddress,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  readNotification,
} from './support/fixtures';
import {
  claimRow,
  insertTerminal,
  insertTerminalRows,
  operatorActions,
  statusCounts,
} from './support/operations-fixtures';
import { useRetryTestApp, type RetryTestApp } from './support/retry-test-app';

const operator = { actor: 'ops:test', reason: 'provider fixed the template' };

describe('operations: terminal failures, redrive, pauses, lease release (real PostgreSQL)', () => {
  const t = useRetryTestApp({
    options: { batchSize: 50 },
    channels: [{ key: 'email' }, { key: 'sms' }],
  });
  let app: RetryTestApp;
  let ds: DataSource;
  let terminal: TerminalFailures;
  let redrive: TerminalRedrive;
  let pauses: ChannelPauses;
  let leases: LeaseRelease;
  let status: OperationsStatus;

  beforeAll(() => {
    ({ app, ds } = t);
    terminal = app.module.get(TerminalFailures);
    redrive = app.module.get(TerminalRedrive);
    pauses = app.module.get(ChannelPauses);
    leases = app.module.get(LeaseRelease);
    status = app.module.get(OperationsStatus);
  });

  beforeEach(() => {
    // Redriven rows are due at the database's now(): the cycle's clock must not lag behind it.
    app.clock.set(new Date(Date.now() + 60_000));
  });

  describe('maskAddress', () => {
    it.each([
      ['jane.doe@example.com', 'j***@***.com'],
      ['+447700900123', '+***23'],
      ['short', '***'],
      ['', '(none)'],
      ['@example.com', '***@***'],
    ])('masks %j as %j', (address, masked) => {
      expect(maskAddress(address)).toBe(masked);
    });
  });

  describe('terminal list and stats', () => {
    it('lists terminal rows only, masked, filtered by channel, error code, since and limit', async () => {
      const old = await insertTerminal(ds, {
        channel: 'email',
        errorCode: 'template_revoked',
        address: 'alice.secret@example.com',
        failedAt: minutesAgo(new Date(), 120),
      });
      const recent = await insertTerminal(ds, {
        channel: 'email',
        errorCode: 'provider_unavailable',
      });
      const sms = await insertTerminal(ds, { channel: 'sms', errorCode: 'provider_unavailable' });
      await insertNotification(ds, { channel: 'email', status: 'Sent' });
      await insertNotification(ds, {
        channel: 'email',
        status: 'Failed',
        nextAttemptAt: new Date(),
      });

      const all = await terminal.list();
      expect(all.map((r) => r.id).sort()).toEqual([old, recent, sms].sort());
      expect(JSON.stringify(all)).not.toMatch(/alice|secret|person-|@example\.com/);
      expect(all.find((r) => r.id === old)?.maskedAddress).toBe('a***@***.com');

      expect((await terminal.list({ channel: 'sms' })).map((r) => r.id)).toEqual([sms]);
      expect((await terminal.list({ errorCode: 'template_revoked' })).map((r) => r.id)).toEqual([
        old,
      ]);
      const since = await terminal.list({ since: minutesAgo(new Date(), 60) });
      expect(since.map((r) => r.id).sort()).toEqual([recent, sms].sort());
      expect(await terminal.list({}, 1)).toHaveLength(1);
    });

    it('serves stored error texts and codes redacted, whoever stored them', async () => {
      // Another writer (a dispatcher's first attempt) stored the provider's text and code as they came.
      const id = await insertTerminal(ds, {
        channel: 'email',
        address: 'carol.quoted@example.com',
        errorCode: 'carol.quoted@example.com',
        errorMessage:
          'mailbox carol.quoted%40example.com is full; "Your statement" bounced (dispatcher, first attempt)',
      });

      const [row] = await terminal.list({ channel: 'email' });
      const stats = await terminal.stats({ channel: 'email' });

      expect(row.id).toBe(id);
      expect(row.errorMessage).toContain('[redacted]');
      expect(row.errorMessage).toContain('(dispatcher, first attempt)');
      expect(row.errorCode).toBe('[redacted]');
      expect(JSON.stringify([row, stats])).not.toMatch(/carol|quoted|Your statement/);
    });

    it('counts by channel × error code with the oldest and newest failure', async () => {
      const past = minutesAgo(new Date(), 30);
      await insertTerminal(ds, { channel: 'email', errorCode: 'bounced', failedAt: past });
      await insertTerminal(ds, { channel: 'email', errorCode: 'bounced' });
      await insertTerminal(ds, { channel: 'sms', errorCode: 'bounced' });

      const stats = await terminal.stats();
      expect(stats.map(({ channel, errorCode, count }) => ({ channel, errorCode, count }))).toEqual(
        [
          { channel: 'email', errorCode: 'bounced', count: 2 },
          { channel: 'sms', errorCode: 'bounced', count: 1 },
        ],
      );
      expect(stats[0]?.oldest.getTime()).toBe(past.getTime());
      expect(stats[0]?.newest.getTime()).toBeGreaterThan(past.getTime());
      expect(await terminal.stats({ channel: 'sms' })).toHaveLength(1);
    });

    it('refuses a bad limit and a bad filter with the option named', async () => {
      await expect(terminal.list({}, 0)).rejects.toThrow(InvalidOperationInputError);
      await expect(terminal.list({}, 5000)).rejects.toThrow(/limit/);
      await expect(terminal.list({ since: new Date('nope') })).rejects.toThrow(/since/);
      await expect(terminal.stats({ channel: '  ' })).rejects.toThrow(/channel/);
    });
  });

  describe('redrive', () => {
    it('is a dry run by default: previews by channel × error code and changes nothing', async () => {
      await insertTerminal(ds, { channel: 'email', errorCode: 'provider_unavailable' });
      const claimed = await insertTerminal(ds, {
        channel: 'email',
        errorCode: 'provider_unavailable',
      });
      await claimRow(ds, claimed);
      const before = await statusCounts(ds);

      const result = await redrive.redrive({ filter: { channel: 'email' } });

      expect(result).toMatchObject({
        dryRun: true,
        eligible: 1,
        claimed: 1,
        redriven: 0,
        actionId: null,
      });
      expect(result.preview).toEqual([
        { channel: 'email', errorCode: 'provider_unavailable', eligible: 1, claimed: 1 },
      ]);
      expect(await statusCounts(ds)).toEqual(before);
      expect(await operatorActions(ds)).toEqual([]);
    });

    it('needs a filter or all, and a reason to apply', async () => {
      await expect(redrive.redrive({ filter: {} })).rejects.toThrow(/pass all/);
      await expect(
        redrive.redrive({ filter: { channel: 'email' }, dryRun: false }),
      ).rejects.toThrow(/reason/);
      await expect(redrive.redrive({ filter: { ids: ['not-a-uuid'] } })).rejects.toThrow(/ids/);
      expect((await redrive.redrive({ filter: {}, all: true })).dryRun).toBe(true);
    });

    it('resets terminal rows only, never Sent, scheduled or claimed ones, audits each, and sends them next cycle', async () => {
      const a = await insertTerminal(ds, {
        channel: 'email',
        errorCode: 'provider_unavailable',
        attempts: 3,
      });
      const b = await insertTerminal(ds, {
        channel: 'email',
        errorCode: 'provider_unavailable',
        attempts: 3,
      });
      const otherCode = await insertTerminal(ds, {
        channel: 'email',
        errorCode: 'invalid_address',
      });
      const claimed = await insertTerminal(ds, {
        channel: 'email',
        errorCode: 'provider_unavailable',
      });
      await claimRow(ds, claimed);
      const sent = await insertNotification(ds, { channel: 'email', status: 'Sent' });
      const scheduled = await insertNotification(ds, {
        channel: 'email',
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: new Date(Date.now() + 3_600_000),
      });
      const untouched = await Promise.all(
        [otherCode, claimed, sent, scheduled].map((id) => readNotification(ds, id)),
      );

      const result = await redrive.redrive({
        filter: { channel: 'email', errorCode: 'provider_unavailable' },
        dryRun: false,
        operator,
      });

      expect(result).toMatchObject({
        dryRun: false,
        eligible: 2,
        claimed: 1,
        redriven: 2,
        batches: 1,
      });
      for (const id of [a, b]) {
        const row = await readNotification(ds, id);
        expect(row).toMatchObject({
          status: 'Failed',
          attempts: 0,
          last_error_code: null,
          last_error_message: null,
        });
        expect(row.next_attempt_at).not.toBeNull();
      }
      expect(
        await Promise.all(
          [otherCode, claimed, sent, scheduled].map((id) => readNotification(ds, id)),
        ),
      ).toEqual(untouched);
      expect(await operatorActions(ds)).toEqual([
        {
          action: 'redrive',
          actor: 'ops:test',
          reason: operator.reason,
          filter: { channel: 'email', errorCode: 'provider_unavailable' },
          rows: 2,
        },
      ]);
      const audit: Array<{
        notification_id: string;
        previous_attempts: number;
        previous_error_code: string;
      }> = await ds.query(
        `SELECT notification_id, previous_attempts, previous_error_code FROM notification_redriven_rows ORDER BY notification_id`,
      );
      expect(audit).toEqual(
        [a, b].sort().map((id) => ({
          notification_id: id,
          previous_attempts: 3,
          previous_error_code: 'provider_unavailable',
        })),
      );

      // Idempotent: the same redrive again finds nothing.
      const again = await redrive.redrive({
        filter: { channel: 'email', errorCode: 'provider_unavailable' },
        dryRun: false,
        operator,
      });
      expect(again.redriven).toBe(0);

      const report = completed(await app.cycles.runCycle());
      expect(report.counts.sent).toBe(2);
      expect((await readNotification(ds, a)).status).toBe('Sent');
    });

    it('never redrives a retrying row (Failed, next attempt scheduled) by channel alone or by since, even with the same error code', async () => {
      const since = new Date(Date.now() - 3_600_000);
      const terminalRow = await insertTerminal(ds, {
        channel: 'sms',
        errorCode: 'provider_unavailable',
      });
      // Same channel, same error code, failed after since: only its scheduled next attempt sets it apart.
      const retrying = await insertTerminal(ds, {
        channel: 'sms',
        errorCode: 'provider_unavailable',
      });
      await ds.query(
        `UPDATE notifications SET next_attempt_at = now() + interval '1 hour' WHERE id = $1`,
        [retrying],
      );
      const before = await readNotification(ds, retrying);
      expect(before.next_attempt_at).not.toBeNull();

      const preview = await redrive.redrive({ filter: { channel: 'sms' } });
      expect(preview).toMatchObject({ eligible: 1, claimed: 0 });
      expect(preview.preview).toEqual([
        { channel: 'sms', errorCode: 'provider_unavailable', eligible: 1, claimed: 0 },
      ]);
      const byChannel = await redrive.redrive({
        filter: { channel: 'sms' },
        dryRun: false,
        operator,
      });
      expect(byChannel).toMatchObject({ eligible: 1, redriven: 1 });
      expect(await readNotification(ds, retrying)).toEqual(before);
      expect((await readNotification(ds, terminalRow)).attempts).toBe(0);

      const second = await insertTerminal(ds, {
        channel: 'sms',
        errorCode: 'provider_unavailable',
      });
      expect((await redrive.redrive({ filter: { since } })).eligible).toBe(1);
      const bySince = await redrive.redrive({ filter: { since }, dryRun: false, operator });
      expect(bySince).toMatchObject({ eligible: 1, redriven: 1 });
      expect(await readNotification(ds, retrying)).toEqual(before);
      expect((await readNotification(ds, second)).attempts).toBe(0);
      const audited: Array<{ notification_id: string }> = await ds.query(
        `SELECT notification_id FROM notification_redriven_rows`,
      );
      expect(audited.map((r) => r.notification_id).sort()).toEqual([terminalRow, second].sort());
    });

    it('redrives by ids, and in batches of 500', async () => {
      const one = await insertTerminal(ds, { channel: 'sms' });
      await insertTerminal(ds, { channel: 'sms' });
      const byId = await redrive.redrive({ filter: { ids: [one] }, dryRun: false, operator });
      expect(byId.redriven).toBe(1);

      await insertTerminalRows(ds, 1_200, 'email', 'bulk');
      const bulk = await redrive.redrive({
        filter: { errorCode: 'bulk' },
        dryRun: false,
        operator,
      });
      expect(bulk).toMatchObject({ redriven: 1_200, batches: 3 });
      expect((await statusCounts(ds)).terminal).toBe(1);
    });
  });

  describe('channel pause and resume', () => {
    it('leaves a paused channel out of the claim (reason paused), shows it in health, and sends again on resume', async () => {
      const now = app.clock.now();
      const waiting = await insertNotification(ds, {
        channel: 'sms',
        status: 'Failed',
        attempts: 1,
        nextAttemptAt: minutesAgo(now, 5),
      });
      const before = await readNotification(ds, waiting);

      const paused = await pauses.pause('sms', { actor: 'ops:test', reason: 'provider outage' });
      expect(paused).toMatchObject({ channel: 'sms', changed: true, paused: true });
      expect((await pauses.pause('sms', operator)).changed).toBe(false);

      const report = completed(await app.cycles.runCycle());
      expect(report.excludedChannels).toEqual([{ channel: 'sms', reason: 'paused', dueRows: 1 }]);
      expect(await readNotification(ds, waiting)).toEqual(before);
      const health = await app.module.get(RetryWorkerHealthIndicator).check('retryWorker');
      expect(health.retryWorker).toMatchObject({ pausedChannels: ['sms'] });
      expect((await status.status()).excludedChannels).toContainEqual({
        channel: 'sms',
        reason: 'paused',
      });

      const resumed = await pauses.resume('sms', { actor: 'ops:test', reason: 'provider back' });
      expect(resumed).toMatchObject({
        changed: true,
        paused: false,
        pause: { reason: 'provider outage' },
      });
      expect((await pauses.resume('sms', operator)).changed).toBe(false);
      expect(completed(await app.cycles.runCycle()).counts.sent).toBe(1);
      expect((await operatorActions(ds)).map((a) => [a.action, a.reason])).toEqual([
        ['channel-pause', 'provider outage'],
        ['channel-resume', 'provider back'],
      ]);
    });

    it('refuses an unknown channel and a pause without a reason', async () => {
      await expect(pauses.pause('emial', operator)).rejects.toThrow(OperationRefusedError);
      await expect(pauses.pause('email', { actor: 'ops:test', reason: ' ' })).rejects.toThrow(
        /reason/,
      );
      expect(await pauses.list()).toEqual([]);
    });
  });

  describe('lease release', () => {
    async function setLease(owner: string, token: number, live: boolean): Promise<void> {
      await ds.query(
        `INSERT INTO distributed_locks (key, owner, fencing_token, acquired_at, expires_at)
         VALUES ('notifications:retry-worker', $1, $2, now() - interval '1 minute',
                 now() + CASE WHEN $3 THEN interval '1 minute' ELSE interval '-1 second' END)`,
        [owner, token, live],
      );
    }

    it('refuses a live lease unless its owner is named, and a stale fencing token', async () => {
      await setLease('host-a:1:x', 7, true);
      await expect(leases.release({ fencingToken: 7, operator })).rejects.toThrow(
        /name that owner/,
      );
      await expect(
        leases.release({ fencingToken: 6, owner: 'host-a:1:x', operator }),
      ).rejects.toThrow(/stale/);
      await expect(
        leases.release({ fencingToken: 7, owner: 'host-b:1:y', operator }),
      ).rejects.toThrow(OperationRefusedError);
      expect((await leases.read())?.live).toBe(true);

      const released = await leases.release({ fencingToken: 7, owner: 'host-a:1:x', operator });
      expect(released).toEqual({
        key: 'notifications:retry-worker',
        owner: 'host-a:1:x',
        fencingToken: 7,
        wasLive: true,
      });
      expect((await leases.read())?.live).toBe(false);
      // The next cycle takes over at once, with a new fencing token.
      expect(completed(await app.cycles.runCycle()).fencingToken).toBe(8);
      expect((await operatorActions(ds)).map((a) => a.action)).toEqual(['lease-release']);
    });

    it('releases an expired lease without naming its owner', async () => {
      await setLease('host-a:1:x', 3, false);
      expect(await leases.release({ fencingToken: 3, operator })).toMatchObject({ wasLive: false });
      await expect(leases.release({ fencingToken: 0, operator })).rejects.toThrow(
        InvalidOperationInputError,
      );
    });
  });

  it('status: lease, last cycle, rows per channel, exclusions and pauses', async () => {
    await insertTerminal(ds, { channel: 'email' });
    await insertNotification(ds, {
      channel: 'sms',
      status: 'Failed',
      attempts: 1,
      nextAttemptAt: minutesAgo(new Date(), 1),
    });
    await insertChannel(ds, { key: 'push', isEnabled: false });
    await pauses.pause('sms', operator);

    completed(await app.cycles.runCycle());
    const report = await status.status();

    expect(report.lease).toMatchObject({ key: 'notifications:retry-worker', live: false });
    expect(report.lastCycle).toMatchObject({ running: false });
    expect(report.channels).toEqual([
      { channel: 'email', backlog: 0, due: 0, deferred: 0, terminal: 1, liveClaims: 0 },
      { channel: 'sms', backlog: 1, due: 1, deferred: 0, terminal: 0, liveClaims: 0 },
    ]);
    expect(report.totals).toMatchObject({ backlog: 1, terminal: 1 });
    expect(report.excludedChannels).toEqual([
      { channel: 'push', reason: 'disabled' },
      { channel: 'sms', reason: 'paused' },
    ]);
    expect(report.pausedChannels.map((p) => p.channel)).toEqual(['sms']);
    expect(JSON.stringify(report)).not.toMatch(/@example\.com/);
  });
});
