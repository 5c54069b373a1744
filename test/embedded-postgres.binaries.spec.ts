import {
  chmod,
  mkdir,
  mkdtemp,
  readFile,
  readlink,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { EmbeddedPostgresUnavailableError } from '../src/database/embedded-postgres-unavailable.error';
import {
  accountToBeCreated,
  firstBlockedPath,
  type PosixAccount,
} from '../src/database/posix-access';
import { runnablePostgresBinaries } from '../src/database/postgres-binaries';
import { stageDirectory } from '../src/database/stage-directory';

/** A user that owns nothing here and is in no group that does. */
const stranger: PosixAccount = { name: 'stranger', uid: 4242, gid: 4242 };

const mode = async (path: string): Promise<number> => (await stat(path)).mode & 0o7777;

/**
 * A binaries package as `@embedded-postgres/<platform>` lays it out, with the
 * modes a private checkout (umask 077) would give it.
 */
async function craftPackage(parent: string): Promise<string> {
  const pkg = join(parent, 'binaries');
  await mkdir(join(pkg, 'dist'), { recursive: true });
  await mkdir(join(pkg, 'native', 'bin'), { recursive: true });
  await mkdir(join(pkg, 'native', 'lib'), { recursive: true });
  await writeFile(join(pkg, 'package.json'), '{"type":"module","version":"1.0.0"}', {
    mode: 0o600,
  });
  await writeFile(join(pkg, 'dist', 'index.js'), 'export const initdb = "";\n', { mode: 0o600 });
  await writeFile(join(pkg, 'native', 'bin', 'initdb'), '#!/bin/sh\necho initdb\n', {
    mode: 0o700,
  });
  await writeFile(join(pkg, 'native', 'lib', 'libx.so.1'), 'library', { mode: 0o600 });
  await symlink('libx.so.1', join(pkg, 'native', 'lib', 'libx.so'));
  for (const dir of ['', 'dist', 'native', 'native/bin', 'native/lib']) {
    await chmod(join(pkg, dir), 0o700);
  }
  return pkg;
}

describe('reaching the embedded PostgreSQL binaries as the server user (finding 8)', () => {
  const cleanups: string[] = [];
  /** A fresh directory under the temp dir, with `dirMode`. */
  async function tempDir(dirMode: number): Promise<string> {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'pin-binaries-spec-')));
    cleanups.push(dir);
    await chmod(dir, dirMode);
    return dir;
  }

  afterAll(async () => {
    for (const dir of cleanups) await rm(dir, { recursive: true, force: true });
  });

  describe('firstBlockedPath', () => {
    it('names the directory on the way that the user cannot enter, with its mode and owner', async () => {
      const outer = await tempDir(0o700);
      await mkdir(join(outer, 'bin'), { mode: 0o755 });
      await writeFile(join(outer, 'bin', 'tool'), '', { mode: 0o755 });

      expect(firstBlockedPath(join(outer, 'bin', 'tool'), stranger)).toEqual({
        path: outer,
        isDirectory: true,
        mode: 0o700,
        uid: process.getuid?.(),
        gid: (await stat(outer)).gid,
      });
      expect(firstBlockedPath(join(outer, 'bin', 'tool'), accountToBeCreated('postgres'))).toEqual(
        expect.objectContaining({ path: outer }),
      );
    });

    it('applies the group bits to a member and the other bits to the rest, as the kernel does', async () => {
      const outer = await tempDir(0o710);
      await writeFile(join(outer, 'tool'), '', { mode: 0o755 });
      const tool = join(outer, 'tool');
      const member: PosixAccount = { name: 'member', uid: 4242, gid: (await stat(outer)).gid };

      expect(firstBlockedPath(tool, member)).toBeNull();
      expect(firstBlockedPath(tool, stranger)).toEqual(expect.objectContaining({ path: outer }));
      // A member is judged by the group bits even where the other bits would let it in.
      await chmod(outer, 0o701);
      expect(firstBlockedPath(tool, stranger)).toBeNull();
      expect(firstBlockedPath(tool, member)).toEqual(expect.objectContaining({ path: outer }));
    });

    it('names a binary the user may reach but not execute', async () => {
      const outer = await tempDir(0o711);
      const tool = join(outer, 'tool');
      await writeFile(tool, '', { mode: 0o744 });

      expect(firstBlockedPath(tool, stranger)).toEqual(
        expect.objectContaining({ path: tool, isDirectory: false, mode: 0o744 }),
      );
      await chmod(tool, 0o755);
      expect(firstBlockedPath(tool, stranger)).toBeNull();
    });

    it('follows symbolic links: a reachable link into a private directory is blocked', async () => {
      const hidden = await tempDir(0o700);
      await writeFile(join(hidden, 'tool'), '', { mode: 0o755 });
      const open = await tempDir(0o755);
      await symlink(join(hidden, 'tool'), join(open, 'tool'));

      expect(firstBlockedPath(join(open, 'tool'), stranger)).toEqual(
        expect.objectContaining({ path: hidden }),
      );
    });
  });

  describe('stageDirectory', () => {
    it('copies a private tree into one every user can read and run, links kept as links', async () => {
      const pkg = await craftPackage(await tempDir(0o700));
      const root = await tempDir(0o755);

      const staged = await stageDirectory(pkg, root, 'pin-spec');

      expect(dirname(staged)).toBe(root);
      expect(basename(staged)).toMatch(/^pin-spec-[0-9a-f]{16}$/);
      for (const dir of ['', 'dist', 'native', 'native/bin', 'native/lib']) {
        expect(await mode(join(staged, dir))).toBe(0o755);
      }
      expect(await mode(join(staged, 'native', 'bin', 'initdb'))).toBe(0o755);
      expect(await mode(join(staged, 'native', 'lib', 'libx.so.1'))).toBe(0o644);
      expect(await mode(join(staged, 'package.json'))).toBe(0o644);
      expect(await readlink(join(staged, 'native', 'lib', 'libx.so'))).toBe('libx.so.1');
      expect(await readFile(join(staged, 'native', 'lib', 'libx.so'), 'utf8')).toBe('library');
      expect(firstBlockedPath(join(staged, 'native', 'bin', 'initdb'), stranger)).toBeNull();
    });

    it('reuses an intact copy, repairs a damaged one, and copies anew when the source changes', async () => {
      const pkg = await craftPackage(await tempDir(0o700));
      const root = await tempDir(0o755);
      const first = await stageDirectory(pkg, root, 'pin-spec');
      const library = join(first, 'native', 'lib', 'libx.so.1');
      const { ino } = await stat(library);

      expect(await stageDirectory(pkg, root, 'pin-spec')).toBe(first);
      expect((await stat(library)).ino).toBe(ino);

      // A temp cleaner removed a file of the copy.
      await rm(library);
      expect(await stageDirectory(pkg, root, 'pin-spec')).toBe(first);
      expect(await readFile(library, 'utf8')).toBe('library');

      await writeFile(join(pkg, 'native', 'lib', 'libx.so.1'), 'library, version 2');
      const second = await stageDirectory(pkg, root, 'pin-spec');
      expect(second).not.toBe(first);
      expect(await readFile(join(second, 'native', 'lib', 'libx.so.1'), 'utf8')).toBe(
        'library, version 2',
      );
    });

    it('replaces a copy that others may write to: what it holds may no longer be what was copied', async () => {
      const pkg = await craftPackage(await tempDir(0o700));
      const root = await tempDir(0o755);
      const first = await stageDirectory(pkg, root, 'pin-spec');
      await chmod(first, 0o777);
      await writeFile(join(first, 'native', 'bin', 'planted'), 'not ours');

      const staged = await stageDirectory(pkg, root, 'pin-spec');

      expect(staged).toBe(first);
      expect(await mode(staged)).toBe(0o755);
      await expect(stat(join(staged, 'native', 'bin', 'planted'))).rejects.toThrow(/ENOENT/);
      expect(await readFile(join(staged, 'native', 'lib', 'libx.so.1'), 'utf8')).toBe('library');
    });
  });

  describe('runnablePostgresBinaries', () => {
    const packageAt = (dir: string) => ({ name: '@embedded-postgres/spec', dir, version: '1.0.0' });

    it('keeps the package where it is when the server user can run it', async () => {
      const pkg = await craftPackage(await tempDir(0o755));
      for (const dir of ['', 'native', 'native/bin']) await chmod(join(pkg, dir), 0o755);
      await chmod(join(pkg, 'native', 'bin', 'initdb'), 0o755);
      const probed: string[] = [];
      const probe = (binary: string): Promise<string | null> => {
        probed.push(binary);
        return Promise.resolve(null);
      };

      const binaries = await runnablePostgresBinaries({
        package: packageAt(pkg),
        account: stranger,
        stagingRoot: await tempDir(0o755),
        probe,
      });

      expect(binaries).toEqual({ packageDir: pkg, staged: false });
      expect(probed).toEqual([join(pkg, 'native', 'bin', 'initdb')]);
    });

    it('stages a package under a directory the server user cannot enter', async () => {
      const pkg = await craftPackage(await tempDir(0o700));
      const root = await tempDir(0o755);

      const binaries = await runnablePostgresBinaries({
        package: packageAt(pkg),
        account: stranger,
        stagingRoot: root,
      });

      expect(binaries.staged).toBe(true);
      expect(dirname(binaries.packageDir)).toBe(root);
      expect(basename(binaries.packageDir)).toMatch(/^pin-notifications-postgres-1\.0\.0-/);
      expect(
        firstBlockedPath(join(binaries.packageDir, 'native', 'bin', 'initdb'), stranger),
      ).toBeNull();
    });

    it('stages when running the binary as the server user fails although the mode bits allow it', async () => {
      const outer = await tempDir(0o755);
      const pkg = await craftPackage(outer);
      for (const dir of ['', 'native', 'native/bin']) await chmod(join(pkg, dir), 0o755);
      await chmod(join(pkg, 'native', 'bin', 'initdb'), 0o755);
      const root = await tempDir(0o755);

      const binaries = await runnablePostgresBinaries({
        package: packageAt(pkg),
        account: stranger,
        stagingRoot: root,
        // An ACL or a noexec mount on the checkout: only the copy under the temp dir runs.
        probe: (binary) =>
          Promise.resolve(binary.startsWith(root) ? null : 'running it fails (spawn EACCES)'),
      });

      expect(binaries).toEqual({ packageDir: expect.stringMatching(`^${root}/`), staged: true });
    });

    it('refuses with the path, the reason and the fix when the temp directory is out of reach too', async () => {
      const pkg = await craftPackage(await tempDir(0o700));
      // TMPDIR=/root/tmp, say: open itself, inside a directory only root may enter.
      const privateTemp = await tempDir(0o700);
      await mkdir(join(privateTemp, 'tmp'));
      await chmod(join(privateTemp, 'tmp'), 0o1777);

      const error = await runnablePostgresBinaries({
        package: packageAt(pkg),
        account: stranger,
        stagingRoot: join(privateTemp, 'tmp'),
      }).catch((failure: unknown) => failure);

      expect(error).toBeInstanceOf(EmbeddedPostgresUnavailableError);
      const { message } = error as EmbeddedPostgresUnavailableError;
      expect(message).toContain(`the stranger user cannot enter ${privateTemp} (mode 0700`);
      expect(message).toContain('TMPDIR');
      expect(message).toContain('clone the repository into a directory every user can enter');
      expect(message).toContain('set DATABASE_URL');
    });

    it('refuses with both reasons when the copy does not run either', async () => {
      const pkg = await craftPackage(await tempDir(0o700));
      const root = await tempDir(0o755);

      const error = await runnablePostgresBinaries({
        package: packageAt(pkg),
        account: stranger,
        stagingRoot: root,
        probe: () => Promise.resolve('running it fails (spawn EACCES)'),
      }).catch((failure: unknown) => failure);

      expect(error).toBeInstanceOf(EmbeddedPostgresUnavailableError);
      const failure = error as EmbeddedPostgresUnavailableError;
      expect(failure.path).toBe(join(pkg, 'native', 'bin', 'initdb'));
      expect(failure.message).toContain(`the stranger user cannot enter ${dirname(pkg)}`);
      expect(failure.message).toContain(`under ${root}/pin-notifications-postgres-1.0.0-`);
      expect(failure.message).toContain('running it fails (spawn EACCES)');
      expect(failure.message).toContain('set DATABASE_URL');
    });
  });
});
