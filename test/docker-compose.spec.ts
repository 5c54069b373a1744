import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import {
  DEFAULT_RETRY_CONCURRENCY,
  MIN_ADMIN_TOKEN_LENGTH,
  parseAppConfig,
} from '../apps/pin-notifications/src/config/app-config';
import { unknownEnvironmentVariables } from '../apps/pin-notifications/src/config/unknown-environment-variables';
import { resolveOptions } from '../libs/notifications-retry/src/options/resolve-options';
import { installedBinary } from './support/installed-binary';

// No Docker engine where the tests run: the file is checked as compose would read it.

const ROOT = join(__dirname, '..');
const composeText = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

/** `${NAME:-default}` as compose resolves it with nothing set in the shell. */
function interpolate(value: string): string {
  return value.replace(/\$\{([A-Z0-9_]+):-([^}]*)\}/g, (_all, _name, fallback: string) => fallback);
}

const compose = load(composeText) as { services: Record<string, Service> };
const app = compose.services.app;
/** What the app's process sees: the image's ENV lines, then compose's environment. */
const appEnv: Record<string, string> = {
  ...Object.fromEntries(
    [...readFileSync(join(ROOT, 'Dockerfile'), 'utf8').matchAll(/^ENV\s+([A-Z0-9_]+)=(\S+)/gm)].map(
      (m) => [m[1], m[2]],
    ),
  ),
  ...Object.fromEntries(
    Object.entries(app.environment ?? {}).map(([name, value]) => [
      name,
      interpolate(String(value)),
    ]),
  ),
};

function majorOf(version: string): number {
  const major = /(\d+)\.\d+/.exec(version)?.[1];
  if (!major) throw new Error(`no version in ${JSON.stringify(version)}`);
  return Number(major);
}

describe('docker-compose.yml as a local stack', () => {
  it('gives the app an environment parseAppConfig accepts, with nothing it does not read', () => {
    expect(appEnv.NODE_ENV).toBe('production');
    const config = parseAppConfig(appEnv);
    expect(config.databaseUrl).toMatch(/@postgres:5432\//);
    expect(unknownEnvironmentVariables(appEnv)).toEqual([]);
  });

  it('runs NATS with JetStream and the relay on, the stream created at start', () => {
    const nats = compose.services.nats;
    expect(nats.command).toContain('-js');
    expect(nats.healthcheck?.test.join(' ')).toContain('js-enabled-only=true');
    expect(app.depends_on?.nats).toEqual({ condition: 'service_healthy' });
    const relay = parseAppConfig(appEnv).outboxRelay.nats;
    expect(relay).not.toBeNull();
    expect(relay?.servers.map((server) => new URL(server).hostname)).toEqual(['nats']);
    expect(relay).toMatchObject({ stream: 'PIN_NOTIFICATIONS', createStream: true });
  });

  it('turns the admin page on with a local-only token of the required length', () => {
    const token = parseAppConfig(appEnv).adminToken;
    expect(token?.length).toBeGreaterThanOrEqual(MIN_ADMIN_TOKEN_LENGTH);
    expect(token).toMatch(/local-only/);
  });

  it("runs the library's default concurrency", () => {
    const { concurrency } = parseAppConfig(appEnv).retryWorker;
    expect(concurrency).toBe(DEFAULT_RETRY_CONCURRENCY);
    expect(concurrency).toBe(resolveOptions({}).concurrency);
  });

  it('runs the Prometheus major whose promtool tests the alert rules', () => {
    const image = compose.services.prometheus.image ?? '';
    const promtool = installedBinary(
      'promtool',
      ['/usr/bin', '/usr/local/bin'],
      'promtool is not installed: `apt-get install prometheus` (Debian; npm test installs it when missing)',
    );
    const version = execFileSync(promtool, ['--version'], { encoding: 'utf8' });
    expect(image).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(majorOf(image.split(':v')[1])).toBe(majorOf(/version (\S+)/.exec(version)?.[1] ?? ''));
  });

  it("documents every variable it takes from the shell, with compose's default", () => {
    const inFile = new Map(
      [...composeText.matchAll(/\$\{([A-Z0-9_]+):-([^}]*)\}/g)].map((m) => [m[1], m[2] || null]),
    );
    const docs = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
    const section = docs.split(/^## /m).find((part) => part.startsWith('docker-compose.yml\n'));
    const documented = new Map(
      [...(section ?? '').matchAll(/^\|\s*`([A-Z0-9_]+)`\s*\|\s*([^|]*?)\s*\|/gm)].map((m) => [
        m[1],
        m[2] === 'unset' ? null : m[2].replace(/^`|`$/g, ''),
      ]),
    );
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(inFile));
  });
});
