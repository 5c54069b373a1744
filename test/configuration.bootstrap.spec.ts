import { millis } from 'nats';
import { startChildHost, type ChildHost } from './support/child-host';
import { startNatsServer, streamInfo, type RunningNatsServer } from './support/nats-server';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

/**
 * The app as main.ts starts it (bootstrapHost, in a child process) from an environment with a
 * misspelt variable and NATS_CREATE_STREAM: the relay from zero, against a nats-server of its own.
 */
describe('start-up from the environment', () => {
  let db: TestDatabase;
  let nats: RunningNatsServer;
  let host: ChildHost | undefined;

  beforeAll(async () => {
    const migrated = await createMigratedDatabase();
    db = migrated.db;
    await migrated.dataSource.destroy();
    nats = await startNatsServer();
  });

  afterAll(async () => {
    if (host && host.child.exitCode === null) host.child.kill('SIGKILL');
    await nats?.stop();
    await db?.drop();
  });

  it('warns once about an unknown RETRY_* variable by name only, and creates the missing stream', async () => {
    host = startChildHost(db.url, {
      RETRY_CONCURENCY: 'value-that-must-not-be-logged',
      NATS_URL: nats.url,
      NATS_STREAM: 'PIN_FROM_ZERO',
      NATS_CREATE_STREAM: 'true',
    });
    await host.waitForLine((line) => line.event === 'app-listening', 60_000);

    const warnings = host.events('unknown-environment-variables');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 40,
      variables: ['RETRY_CONCURENCY'],
      didYouMean: { RETRY_CONCURENCY: 'RETRY_CONCURRENCY' },
    });
    expect(JSON.stringify(host.lines)).not.toContain('value-that-must-not-be-logged');

    expect(host.events('outbox-stream-created')[0]).toMatchObject({
      stream: 'PIN_FROM_ZERO',
      subjects: ['pin.notifications.>'],
    });
    const info = await streamInfo(nats.url, 'PIN_FROM_ZERO');
    expect(info.config.subjects).toEqual(['pin.notifications.>']);
    // The relay's defaults need 107 s; a stream made here gets at least JetStream's 2 min.
    expect(millis(info.config.duplicate_window)).toBe(120_000);
    expect(host.events('outbox-relay-on')[0]).toMatchObject({
      stream: 'PIN_FROM_ZERO',
      createStream: true,
    });

    host.child.kill('SIGTERM');
    expect((await host.exited).code).toBe(0);
  }, 90_000);
});
