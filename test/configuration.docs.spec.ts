import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAppConfig } from '../apps/pin-notifications/src/config/app-config';
import { ENVIRONMENT_VARIABLES } from '../apps/pin-notifications/src/config/environment-variables';
import { unknownEnvironmentVariables } from '../apps/pin-notifications/src/config/unknown-environment-variables';
import { resolveOptions } from '../libs/notifications-retry/src/options/resolve-options';

const ROOT = join(__dirname, '..');

/** The rows of the first table under a heading: first cell (the name) → second (the default). */
function documentedDefaults(heading: string): Map<string, string | null> {
  const text = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
  const section = text.split(/^## /m).find((part) => part.startsWith(`${heading}\n`));
  if (!section) throw new Error(`docs/configuration.md has no "## ${heading}"`);
  const rows = new Map<string, string | null>();
  for (const line of section.split('\n')) {
    const cells = /^\|\s*`([A-Z0-9_]+)`\s*\|\s*([^|]*?)\s*\|/.exec(line);
    if (!cells) continue;
    rows.set(cells[1], cells[2] === 'unset' ? null : cells[2].replace(/^`|`$/g, ''));
  }
  return rows;
}

/** What the app is configured with: the parse, the retry options as the library resolves them, or the refusal. */
function outcome(env: NodeJS.ProcessEnv): unknown {
  try {
    const config = parseAppConfig(env);
    // instanceId is random per call: not configuration.
    return { ...config, retryWorker: { ...resolveOptions(config.retryWorker), instanceId: null } };
  } catch (error) {
    return { refused: (error as Error).message };
  }
}

/** A valid value other than the default for each variable parseAppConfig reads. */
const EXAMPLES: Record<string, string> = {
  DATABASE_URL: 'postgres://pin@db.internal:5432/pin',
  PORT: '8080',
  NODE_ENV: 'production',
  LOG_LEVEL: 'debug',
  RETRY_WORKER_ENABLED: 'false',
  RETRY_CRON: '*/30 * * * * *',
  RETRY_BATCH_SIZE: '50',
  RETRY_CONCURRENCY: '8',
  STUB_PROVIDERS: 'email',
  SEED_DEMO_DATA: 'true',
  ADMIN_TOKEN: 'an-admin-token-of-enough-length',
  NATS_URL: 'nats://nats:4222',
  NATS_SUBJECT_PREFIX: 'eu',
  NATS_STREAM: 'PIN_NOTIFICATIONS',
  NATS_CREATE_STREAM: 'true',
  OUTBOX_RETENTION_DAYS: '30',
};
/** What a variable is only read beside. */
const NEEDS: Record<string, NodeJS.ProcessEnv> = {
  NATS_SUBJECT_PREFIX: { NATS_URL: EXAMPLES.NATS_URL },
  NATS_STREAM: { NATS_URL: EXAMPLES.NATS_URL },
  NATS_CREATE_STREAM: { NATS_URL: EXAMPLES.NATS_URL, NATS_STREAM: EXAMPLES.NATS_STREAM },
};

const appVariables = ENVIRONMENT_VARIABLES.filter((v) => v.readBy === 'app-config');

describe('docs/configuration.md against the config parser', () => {
  it('lists every declared variable with its default, and nothing else', () => {
    const documented = documentedDefaults('Environment variables');
    const declared = new Map(ENVIRONMENT_VARIABLES.map((v) => [v.name, v.default]));
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(declared));
    // The minimum.
    for (const name of [
      'DATABASE_URL',
      'PORT',
      'LOG_LEVEL',
      'RETRY_CONCURRENCY',
      'STUB_PROVIDERS',
      'SEED_DEMO_DATA',
      'NATS_URL',
      'NATS_SUBJECT_PREFIX',
      'NATS_STREAM',
      'OUTBOX_RETENTION_DAYS',
      'ADMIN_TOKEN',
      'POSTGRES_PORT',
      'NODE_ENV',
    ]) {
      expect(declared.has(name)).toBe(true);
    }
  });

  it.each(appVariables.map((v) => [v.name]))(
    '%s is read: setting it changes what the app is configured with',
    (name) => {
      expect(EXAMPLES[name]).toBeDefined();
      const base = NEEDS[name] ?? {};
      expect(outcome({ ...base, [name]: EXAMPLES[name] })).not.toEqual(outcome(base));
    },
  );

  it.each(appVariables.filter((v) => v.default !== null).map((v) => [v.name, v.default]))(
    '%s=%s is its default: setting it to that changes nothing',
    (name, value) => {
      const base = NEEDS[name] ?? {};
      const withDefault = outcome({ ...base, [name]: value ?? '' });
      expect(withDefault).not.toHaveProperty('refused');
      expect(withDefault).toEqual(outcome(base));
    },
  );

  it.each(ENVIRONMENT_VARIABLES.filter((v) => v.readBy !== 'app-config').map((v) => [v.name, v]))(
    '%s is read where the list says',
    (_name, variable) => {
      expect(variable.readAt).toBeDefined();
      const source = readFileSync(join(ROOT, variable.readAt ?? ''), 'utf8');
      expect(source).toContain(variable.readAs ?? variable.name);
    },
  );

  it('reads no variable the list does not declare', () => {
    const read = new Set<string>();
    const watched = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
      new Proxy(env, {
        get(target, key) {
          if (typeof key === 'string') read.add(key);
          return target[key as string];
        },
      });
    // NODE_ENV matters only without DATABASE_URL: both paths.
    parseAppConfig(watched({ ...EXAMPLES }));
    parseAppConfig(watched({ ...EXAMPLES, DATABASE_URL: undefined, NODE_ENV: 'development' }));
    const declared = new Set(appVariables.map((v) => v.name));
    expect([...read].filter((name) => !declared.has(name))).toEqual([]);
    expect([...declared].filter((name) => !read.has(name))).toEqual([]);
  });
});

describe('unknownEnvironmentVariables', () => {
  it('names unknown RETRY_*, NATS_* and OUTBOX_* variables, with the likely intended one, never a value', () => {
    const warnings = unknownEnvironmentVariables({
      RETRY_CONCURENCY: 'secret-looking-value',
      NATS_STREM: 'PIN',
      OUTBOX_RETENTION: '3',
      NATS_CREDS: '/run/secrets/creds',
      RETRY_CONCURRENCY: '8',
      NATS_URL: 'nats://n:4222',
      HOME: '/root',
      PATH: '/usr/bin',
    });
    expect(warnings).toEqual([
      { name: 'NATS_CREDS', didYouMean: null },
      { name: 'NATS_STREM', didYouMean: 'NATS_STREAM' },
      { name: 'OUTBOX_RETENTION', didYouMean: null },
      { name: 'RETRY_CONCURENCY', didYouMean: 'RETRY_CONCURRENCY' },
    ]);
    expect(JSON.stringify(warnings)).not.toMatch(/secret-looking-value|run\/secrets/);
  });

  it('says nothing when every such variable is one the app reads', () => {
    expect(
      unknownEnvironmentVariables({
        ...Object.fromEntries(appVariables.map((v) => [v.name, 'x'])),
        NODE_OPTIONS: '--max-old-space-size=512',
      }),
    ).toEqual([]);
  });
});
