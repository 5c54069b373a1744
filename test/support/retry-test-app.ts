import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { insertChannel, type ChannelFixture } from './fixtures';
import {
  startRetryTestApp,
  type RetryTestApp,
  type RetryTestAppOptions,
} from './retry-test-app.start';
import { createMigratedDatabase, createTestDatabase, type TestDatabase } from './test-database';

export {
  adaptersModule,
  RecordingAlertSink,
  type RetryTestApp,
  type RetryTestAppOptions,
} from './retry-test-app.start';

/**
 * How a test asks for an app: everything `RetryTestAppOptions` has, but the URL
 * defaults to the harness's database. A function receives that URL and returns
 * the one to connect to (a pooler in front of it, say).
 */
export type RetryAppConfig = Omit<RetryTestAppOptions, 'url'> & {
  readonly url?: string | ((databaseUrl: string) => string);
};

/** The harness's database and the apps it starts on it. */
export interface RetryDatabaseHarness {
  readonly db: TestDatabase;
  /** A DataSource on the database: the harness's own (useRetryDatabase) or the app's (useRetryTestApp). */
  readonly ds: DataSource;
  /**
   * Another app on the harness's database (a second worker, per-test options).
   * The harness closes it: after the test when started inside one, after all
   * tests of the harness's describe when started in a `beforeAll`. A start-up
   * that fails rejects with its error and leaves nothing open, so
   * `await expect(t.start(config)).rejects.toThrow(...)` asserts it.
   */
  start(config?: RetryAppConfig): Promise<RetryTestApp>;
  /**
   * A clean-up to run after all tests, once the harness has closed its apps and
   * before it drops the database: for what the spec opened on it (a pg Client,
   * a pooler in front of it). A spec's own `afterAll` would run after the drop.
   * Last registered, first run.
   */
  teardown(cleanup: () => unknown): void;
}

/** What `useRetryTestApp` hands a test file: the app, its database, and seed helpers. */
export interface RetryTestBundle extends RetryDatabaseHarness {
  readonly app: RetryTestApp;
  /** `count` due Failed rows of `channel` (default email), oldest first; their ids. */
  dueRows(count: number, channel?: string): Promise<string[]>;
}

export interface UseRetryTestAppConfig extends RetryAppConfig {
  /** Channels inserted before each test; default `[{ key: 'email' }]`. */
  readonly channels?: readonly ChannelFixture[];
  /** Share the database of an enclosing describe's harness instead of creating one. */
  readonly database?: RetryDatabaseHarness;
  /**
   * `false`: no reset and no channels before each test; the tests share what the
   * ones before them left (the app's log lines from start-up, say) and the spec
   * arranges its rows itself. Default `true`.
   */
  readonly reset?: boolean;
}

/**
 * Registers the hooks that own the apps `start` returns; call inside a describe.
 * `afterTestApps` runs once a test's own apps are closed.
 */
function appTracker(url: () => string, afterTestApps: () => void = () => undefined) {
  let inTest = false;
  const perTest: RetryTestApp[] = [];
  const perDescribe: RetryTestApp[] = [];
  const cleanups: Array<() => unknown> = [];
  const closeAll = async (apps: RetryTestApp[]) => {
    const errors: unknown[] = [];
    while (apps.length)
      await apps
        .pop()!
        .close()
        .catch((error: unknown) => errors.push(error));
    if (errors.length) throw errors[0];
  };
  beforeEach(() => {
    inTest = true;
  });
  afterEach(async () => {
    inTest = false;
    if (perTest.length === 0) return;
    await closeAll(perTest);
    afterTestApps();
  });
  return {
    async start(config: RetryAppConfig = {}): Promise<RetryTestApp> {
      const own = url();
      const target = typeof config.url === 'function' ? config.url(own) : (config.url ?? own);
      const app = await startRetryTestApp({ ...config, url: target });
      (inTest ? perTest : perDescribe).push(app);
      return app;
    },
    teardown: (cleanup: () => unknown) => void cleanups.push(cleanup),
    /** Closes the apps started outside tests. */
    closeStarted: () => closeAll(perDescribe),
    /** Runs the teardowns, last registered first. */
    async runTeardowns(): Promise<void> {
      while (cleanups.length) await cleanups.pop()!();
    },
  };
}

/**
 * A fresh, migrated database for a describe, with no app: for specs that start
 * their apps themselves (several workers, per-test options, start-ups that must
 * fail). `ds` is the harness's own DataSource, open from before all tests to
 * after all; `start` hands out apps the harness closes.
 */
export function useRetryDatabase(): RetryDatabaseHarness {
  let db: TestDatabase | undefined;
  let ds: DataSource | undefined;
  const apps = appTracker(() => harness.db.url);
  const harness: RetryDatabaseHarness = {
    get db() {
      if (!db) throw new Error('useRetryDatabase: the database exists only inside tests');
      return db;
    },
    get ds() {
      if (!ds) throw new Error('useRetryDatabase: the DataSource exists only inside tests');
      return ds;
    },
    start: (config) => apps.start(config),
    teardown: apps.teardown,
  };
  beforeAll(async () => {
    ({ db, dataSource: ds } = await createMigratedDatabase());
  });
  afterAll(async () => {
    await apps.closeStarted();
    await apps.runTeardowns();
    await ds?.destroy();
    await db?.drop();
  });
  return harness;
}

/**
 * One app for a describe, owning its lifecycle: a fresh database (or the
 * enclosing harness's, with `database`) and app before all tests, a complete
 * reset (tables, recorded calls, log lines, the provider's script) and the
 * channels (default `email`) before each, and everything closed after. Call it
 * at the top of a `describe`; read the bundle inside tests.
 */
export function useRetryTestApp(config: UseRetryTestAppConfig = {}): RetryTestBundle {
  const { channels, database, reset = true, ...appConfig } = config;
  let app: RetryTestApp | undefined;
  let db: TestDatabase | undefined;
  // Nest's logger is one per process: each app takes it over when it starts. Once a test's own
  // apps are closed, the file's app gets it back, so later tests read their lines in `app.logs`.
  const apps = appTracker(
    () => bundle.db.url,
    () => app?.module.useLogger(app.logs),
  );
  const bundle: RetryTestBundle = {
    get app() {
      if (!app) throw new Error('useRetryTestApp: the app exists only inside tests');
      return app;
    },
    get db() {
      if (!db) throw new Error('useRetryTestApp: the database exists only inside tests');
      return db;
    },
    get ds() {
      return bundle.app.dataSource;
    },
    start: (extra) => apps.start(extra),
    teardown: apps.teardown,
    async dueRows(count, channel = 'email') {
      const now = bundle.app.clock.now();
      const ids = Array.from({ length: count }, () => randomUUID());
      await bundle.ds.query(
        `INSERT INTO notifications (id, channel, recipient_address, subject, body, status, attempts, next_attempt_at)
         SELECT id, $2, 'person-' || left(id::text, 8) || '@example.com', 'Your statement',
                'Hello, your statement is ready.', 'Failed', 1, $3::timestamptz - (ord || ' ms')::interval
           FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, ord)`,
        [ids, channel, new Date(now.getTime() - 60_000 + count)],
      );
      return ids;
    },
  };
  beforeAll(async () => {
    db = database ? database.db : await createTestDatabase();
    const own = db.url;
    const url = typeof appConfig.url === 'function' ? appConfig.url(own) : (appConfig.url ?? own);
    app = await startRetryTestApp({ ...appConfig, url });
  });
  beforeEach(async () => {
    if (!reset) return;
    await bundle.app.reset();
    bundle.app.provider?.respondWith((message) => ({
      providerMessageId: `scripted-${message.id}`,
    }));
    for (const channel of channels ?? [{ key: 'email' }]) await insertChannel(bundle.ds, channel);
  });
  afterAll(async () => {
    await apps.closeStarted();
    await app?.close();
    await apps.runTeardowns();
    if (!database) await db?.drop();
  });
  return bundle;
}
