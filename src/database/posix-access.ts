import { execFileSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { dirname, parse } from 'node:path';

/**
 * A user as the kernel judges the access of a process spawned as that user by
 * Node (`spawn` with `uid` and `gid`): its uid and its primary group only,
 * since libuv drops the supplementary groups when it switches user.
 */
export interface PosixAccount {
  readonly name: string;
  /** -1 for a user that does not exist yet: it will own nothing. */
  readonly uid: number;
  /** -1 for a user that does not exist yet: its group will own nothing. */
  readonly gid: number;
}

/** A path `account` cannot pass: a directory it cannot enter, or a file it cannot execute. */
export interface BlockedPath {
  readonly path: string;
  readonly isDirectory: boolean;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
}

/** The account named `name` on this machine, or null when there is none. */
export function lookupAccount(name: string): PosixAccount | null {
  try {
    const id = (flag: string): string =>
      execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return { name, uid: Number(id('-u').trim()), gid: Number(id('-g').trim()) };
  } catch {
    return null;
  }
}

/**
 * A user yet to be created (`useradd`): in a group of its own that owns
 * nothing, so only the "other" permission bits apply to it.
 */
export function accountToBeCreated(name: string): PosixAccount {
  return { name, uid: -1, gid: -1 };
}

/**
 * The first path on the way to `target` that `account` lacks the execute bit
 * on: every directory from the root down (search permission) and `target`
 * itself (execute for a file, search for a directory). Symbolic links are
 * resolved first, as the kernel follows them. The permission bits only: an
 * ACL or a security module may still say no, which running the binary shows.
 */
export function firstBlockedPath(target: string, account: PosixAccount): BlockedPath | null {
  if (account.uid === 0) return null;
  const real = realpathSync(target);
  const chain: string[] = [];
  for (let path = real; ; path = dirname(path)) {
    chain.unshift(path);
    if (path === parse(path).root) break;
  }
  for (const path of chain) {
    const st = statSync(path);
    const bit = st.uid === account.uid ? 0o100 : st.gid === account.gid ? 0o010 : 0o001;
    if ((st.mode & bit) === 0) {
      return {
        path,
        isDirectory: st.isDirectory(),
        mode: st.mode & 0o7777,
        uid: st.uid,
        gid: st.gid,
      };
    }
  }
  return null;
}
