import { createHash } from 'node:crypto';
import { chmod, cp, lstat, mkdtemp, readdir, readlink, rename, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';

/**
 * A copy of `source` under `stagingRoot` that every user can read and run:
 * directories 0755, files 0755 when they were executable and 0644 otherwise,
 * symbolic links as they are (relative ones keep pointing inside the copy).
 * Owned by this process's user, so no other user can change what it runs.
 *
 * Kept for later runs under a name made of `prefix` and a digest of the
 * source's listing (paths, types, sizes, link targets): the next run reuses
 * it when it is still intact, this user's and writable by this user alone,
 * and otherwise copies afresh. Concurrent runs each copy into a directory of their own and move
 * it into place; the first one to get there wins.
 */
export async function stageDirectory(
  source: string,
  stagingRoot: string,
  prefix: string,
): Promise<string> {
  const listing = await directoryListing(source);
  const digest = createHash('sha256').update(listing).digest('hex').slice(0, 16);
  const target = join(stagingRoot, `${prefix}-${digest}`);
  if (await isIntactCopy(target, listing)) return target;

  const fresh = await mkdtemp(`${target}.partial-`);
  try {
    await cp(source, fresh, { recursive: true, verbatimSymlinks: true, force: true });
    await openUp(fresh);
  } catch (error) {
    await rm(fresh, { recursive: true, force: true });
    throw error;
  }
  if (!(await moveInto(fresh, target))) {
    if (await isIntactCopy(target, listing)) {
      // Another run staged the same files meanwhile.
      await rm(fresh, { recursive: true, force: true });
      return target;
    }
    if (await isOwnedByUs(target)) {
      // Ours, but damaged (a temp cleaner) or opened up to other writers: replaced.
      await rm(target, { recursive: true, force: true });
      if (await moveInto(fresh, target)) return target;
    }
    // Someone else's directory under our name: never run what it holds. The fresh copy is used
    // instead, and stays behind in the temp directory.
    return fresh;
  }
  return target;
}

async function moveInto(from: string, to: string): Promise<boolean> {
  try {
    await rename(from, to);
    return true;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EEXIST' || code === 'ENOTEMPTY' || code === 'ENOTDIR') return false;
    throw error;
  }
}

async function openUp(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await openUp(path);
    else if (entry.isFile()) {
      const { mode } = await lstat(path);
      await chmod(path, mode & 0o111 ? 0o755 : 0o644);
    }
  }
}

async function isOwnedByUs(path: string): Promise<boolean> {
  const st = await lstat(path).catch(() => null);
  return st !== null && st.uid === process.getuid?.();
}

/** Our directory, writable by us alone (so what it holds is what we put there), listing `listing`. */
async function isIntactCopy(path: string, listing: string): Promise<boolean> {
  const st = await lstat(path).catch(() => null);
  if (!st?.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o022) !== 0) return false;
  return (await directoryListing(path).catch(() => null)) === listing;
}

/** One line per entry below `root`, sorted: type, relative path, size or link target. */
async function directoryListing(root: string): Promise<string> {
  const lines: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const name = relative(root, path);
      if (entry.isDirectory()) {
        lines.push(`d ${name}`);
        await walk(path);
      } else if (entry.isSymbolicLink()) {
        lines.push(`l ${name} -> ${await readlink(path)}`);
      } else {
        lines.push(`f ${name} ${(await lstat(path)).size}`);
      }
    }
  };
  await walk(root);
  return lines.sort().join('\n');
}
