import { hostname, userInfo } from 'node:os';

/**
 * Who the audit records for a command run without `--actor`: `cli:<user>@<host>`,
 * the user from the given `USER` (the environment the CLI was started with),
 * else the OS account.
 */
export function cliActor(user: string | undefined): string {
  return `cli:${user ?? osUserName()}@${hostname()}`;
}

function osUserName(): string {
  try {
    return userInfo().username;
  } catch {
    // No passwd entry for the uid (a container's arbitrary user).
    return 'unknown';
  }
}
