import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startChildHost, type ChildHost } from './support/child-host';
import { embeddedServerOf, type EmbeddedHostServer } from './support/embedded-host-server';
import { waitFor } from './support/deferred';
import { isAlive, killGroup } from './support/processes';

/**
 * The embedded PostgreSQL runs out of the app's process group (a Ctrl-C must
 * not reach it), so nothing of the terminal's stops it for the app. When the
 * app dies without stopping it (SIGKILL, an OOM kill), its watchdog does: the
 * app's end closes the watchdog's pipe, the server shuts down and its data
 * directory is deleted. No PostgreSQL is left behind a dead app.
 */
describe('shutdown: the host SIGKILLed with the embedded PostgreSQL', () => {
  let host: ChildHost | undefined;
  let server: EmbeddedHostServer | undefined;

  afterAll(() => {
    if (host?.child.pid && host.child.exitCode === null) killGroup(host.child.pid, 'SIGKILL');
    if (server && isAlive(server.pid)) process.kill(server.pid, 'SIGQUIT');
  });

  it('stops its PostgreSQL and deletes the data once the app is gone', async () => {
    host = startChildHost(null, { SEED_DEMO_DATA: 'false' }, { ownProcessGroup: true });
    await host.waitForLine((line) => line.event === 'app-listening', 90_000);
    server = await embeddedServerOf(host);
    expect(isAlive(server.pid)).toBe(true);

    // The app's process only: its group holds nothing else, the server has a session of its own.
    host.child.kill('SIGKILL');
    expect(await host.exited).toMatchObject({ signal: 'SIGKILL' });
    expect(isAlive(-(host.child.pid as number))).toBe(false);

    const { pid, dataDirectory } = server;
    await waitFor(() => !isAlive(pid), 15_000, `postmaster ${pid} exited`);
    await waitFor(
      () => !existsSync(join(dataDirectory, 'PG_VERSION')),
      5_000,
      `${dataDirectory} deleted`,
    );
  }, 120_000);
});
