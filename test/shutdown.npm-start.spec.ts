import { startNpmStart, type ChildHost } from './support/child-host';
import { deadConnectionLines } from './support/dead-connection-lines';
import { embeddedServerOf, type EmbeddedHostServer } from './support/embedded-host-server';
import { waitFor } from './support/deferred';
import { isAlive, killGroup } from './support/processes';

/**
 * Ctrl-C on the README's `npm start` (no DATABASE_URL: the embedded
 * PostgreSQL and the demo rows), through the real path: npm, the nest CLI
 * (build, then the built main.js), the app. The terminal's SIGINT goes to
 * the whole group, and npm and the nest CLI forward it again: the app must
 * take the first, ignore the others, stop before its PostgreSQL and say so in
 * one line. npm's own exit follows its rule for a SIGINT it received (it
 * re-raises it), so the app's clean stop is read from the app's line.
 */
describe('shutdown: Ctrl-C on npm start (npm → nest CLI → app, embedded PostgreSQL)', () => {
  let host: ChildHost | undefined;
  let server: EmbeddedHostServer | undefined;

  afterAll(() => {
    if (host?.child.pid && isAlive(-host.child.pid)) killGroup(host.child.pid, 'SIGKILL');
    if (server && isAlive(server.pid)) process.kill(server.pid, 'SIGQUIT');
  });

  it('stops the app, then its PostgreSQL, with one app-stopped line and no 57P01', async () => {
    // A cycle every second, so that one is likely running when the signal comes.
    host = startNpmStart({ RETRY_CRON: '* * * * * *' });
    const child = host;
    await child.waitForLine((line) => line.event === 'app-listening', 150_000);
    server = await embeddedServerOf(child);
    await child.waitForLine((line) => line.event === 'cycle-completed', 30_000);

    const linesAtSignal = child.lines.length;
    killGroup(child.child.pid as number, 'SIGINT');
    await child.exited;
    // npm exits once the nest CLI has, which waits for the app; the group is empty after.
    await waitFor(() => !isAlive(-(child.child.pid as number)), 15_000, 'the npm group exited');

    expect(deadConnectionLines(child)).toEqual([]);
    // Warnings of the stop, not of the demo's rows (they fail, retry and alert by design).
    const DEMO_OUTCOMES = /^(item-|notification-terminal-failure-alert$)/;
    const warnings = child.lines
      .slice(linesAtSignal)
      .filter((line) => (line.level as number) >= 40 && !DEMO_OUTCOMES.test(String(line.event)));
    expect(warnings).toEqual([]);
    expect(child.events('app-stopped')).toEqual([
      expect.objectContaining({
        signal: 'SIGINT',
        lease: expect.stringMatching(/^(released|not-held)$/),
        callsCut: 0,
        database: 'stopped',
        durationMs: expect.any(Number),
      }),
    ]);
    expect(isAlive(server.pid)).toBe(false);
  }, 240_000);
});
