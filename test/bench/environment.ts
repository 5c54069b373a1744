import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';

export interface BenchEnvironment {
  readonly machine: string;
  readonly node: string;
  readonly postgres: string;
  readonly packages: string;
  /** The checkout's commit, "+ uncommitted changes" when the work tree differs from it. */
  readonly commit: string;
}

const PACKAGES = ['@nestjs/core', 'typeorm', 'pg', 'pg-boss', 'graphile-worker'];

export async function describeEnvironment(
  client: Client,
  serverDescription: string,
): Promise<BenchEnvironment> {
  const setting = async (name: string): Promise<string> =>
    (await client.query<{ value: string }>(`SELECT current_setting($1) AS value`, [name])).rows[0]
      .value;
  const cpuList = cpus();
  const memoryGb = (totalmem() / 1024 ** 3).toFixed(1);
  return {
    machine: `${cpuList.length} CPUs (${cpuList[0]?.model.trim() ?? 'unknown'}), ${memoryGb} GB RAM, ${process.platform}/${process.arch}`,
    node: process.version,
    postgres:
      `PostgreSQL ${await setting('server_version')} on ${serverDescription}; ` +
      `fsync=${await setting('fsync')}, synchronous_commit=${await setting('synchronous_commit')}, ` +
      `shared_buffers=${await setting('shared_buffers')}, max_connections=${await setting('max_connections')}`,
    packages: PACKAGES.map((name) => `${name} ${packageVersion(name)}`).join(', '),
    commit: checkoutCommit(),
  };
}

function packageVersion(name: string): string {
  try {
    const path = join(__dirname, '..', '..', 'node_modules', name, 'package.json');
    return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

function checkoutCommit(): string {
  const git = (...args: string[]): string =>
    execFileSync('git', args, { cwd: join(__dirname, '..', '..'), encoding: 'utf8' }).trim();
  try {
    const commit = git('rev-parse', '--short', 'HEAD');
    return git('status', '--porcelain', '--untracked-files=no') === ''
      ? commit
      : `${commit} + uncommitted changes`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}
