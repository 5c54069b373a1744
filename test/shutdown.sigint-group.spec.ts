import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { startChildHost, type ChildHost } from './support/child-host';
import { deadConnectionLines } from './support/dead-connection-lines';
import { embeddedServerOf, type EmbeddedHostServer } from './support/embedded-host-server';
import { isAlive, killGroup } from './support/processes';

const SLOW_SEND_MS = 3_000;
/** The worker's default shutdownGraceMs: provider calls still running after it are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Ctrl-C on `npm start` with no DATABASE_URL: the terminal sends SIGINT to
 * the whole foreground process group. The host (bootstrapHost, as main.ts
 * runs it, in a group of its own here) starts its embedded PostgreSQL; the
 * signal goes to the group while a cycle waits on a slow provider. The app
 * must stop first (drain, release the lease, close its pool) and its
 * PostgreSQL after: no dead-connection error, exit 0, the server's processes
 * and data directory gone, and one `app-stopped` line saying what was drained.
 */
describe('shutdown: Ctrl-C (SIGINT to the process group) with the embedded PostgreSQL', () => {
  let host: ChildHost | undefined;
  let server: EmbeddedHostServer | undefined;

  afterAll(() => {
    // Only what this test started, should it have failed half-way.
    if (host?.child.pid && host.child.exitCode === null) killGroup(host.child.pid, 'SIGKILL');
    if (server && isAlive(server.pid)) process.kill(server.pid, 'SIGQUIT');
  });

  it('drains the cycle, then stops its PostgreSQL, with one app-stopped line and no 57P01', async () => {
    host = startChildHost(
      null,
      // No demo rows: the slow rows below are the cycle's only work, and any warning is the stop's.
      { RETRY_CONCURRENCY: '2', SLOW_SEND_MS: String(SLOW_SEND_MS), SEED_DEMO_DATA: 'false' },
      { ownProcessGroup: true },
    );
    const child = host;
    await child.waitForLine((line) => line.event === 'app-listening', 90_000);
    server = await embeddedServerOf(child);

    // Arranged on the app's own embedded server: a channel served by the slow adapter, six due rows.
    const client = new Client({ connectionString: server.url });
    await client.connect();
    try {
      await client.query(
        `INSERT INTO notification_channels
           (key, is_enabled, provider_key, max_attempts, backoff_kind, backoff_base_ms,
            backoff_max_ms, backoff_multiplier, timeout_ms)
         VALUES ('slow_lane', true, 'slow', 3, 'Fixed', 60000, 60000, 1, 15000)`,
      );
      await client.query(
        `INSERT INTO notifications (id, channel, recipient_address, body, status, attempts, next_attempt_at)
         SELECT gen_random_uuid(), 'slow_lane', 'someone-' || n || '@example.com', 'Hello', 'Failed', 1,
                now() - make_interval(mins => 60 - n)
         FROM generate_series(1, 6) AS n`,
      );
    } finally {
      // Not left on the server: its shutdown would end this session too.
      await client.end();
    }

    // Two rows in flight (concurrency 2), each held for SLOW_SEND_MS by the provider.
    await child.waitForLine(() => child.events('slow-send-started').length >= 2, 45_000);
    const signalledAt = Date.now();
    killGroup(child.child.pid as number, 'SIGINT');
    const exit = await child.exited;

    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.at - signalledAt).toBeLessThan(SHUTDOWN_GRACE_MS);
    expect(deadConnectionLines(child)).toEqual([]);
    expect(child.lines.filter((line) => (line.level as number) >= 40)).toEqual([]);

    // The calls in flight finished and were written, before the lease went back.
    const inFlight = child.events('slow-send-started').map((line) => line.id);
    expect(inFlight).toHaveLength(2);
    expect(child.events('slow-send-finished').map((line) => line.id)).toEqual(
      expect.arrayContaining(inFlight),
    );
    expect(child.events('item-sent').map((line) => line.notificationId)).toEqual(
      expect.arrayContaining(inFlight),
    );
    expect(child.events('cycle-completed').at(-1)).toMatchObject({ stopReason: 'cancelled' });

    const stopped = child.events('app-stopped');
    expect(stopped).toEqual([
      expect.objectContaining({
        signal: 'SIGINT',
        cycleInFlight: true,
        callsDrained: 2,
        callsCut: 0,
        rowsWritten: 2,
        claimsHandedBack: expect.any(Number),
        lease: 'released',
        database: 'stopped',
        durationMs: expect.any(Number),
      }),
    ]);
    // The drain waited out the slow calls, and the line came last: after the database stopped.
    expect(stopped[0].workerDrainMs).toBeGreaterThan(SLOW_SEND_MS / 2);
    expect(stopped[0].durationMs).toBeGreaterThanOrEqual(stopped[0].workerDrainMs as number);
    expect(child.lines.at(-1)).toBe(stopped[0]);

    // Its PostgreSQL is gone, processes and data alike.
    expect(isAlive(server.pid)).toBe(false);
    expect(existsSync(join(server.dataDirectory, 'PG_VERSION'))).toBe(false);
  }, 180_000);
});
