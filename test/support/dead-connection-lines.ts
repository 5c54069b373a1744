import type { ChildHost } from './child-host';

/**
 * What a host writes when its database went away under it: the server's
 * 57P01 ("terminating connection due to administrator command"), pg's and
 * TypeORM's pool errors, refused or reset sockets.
 */
const DEAD_CONNECTION_LINE =
  /57P01|terminating connection|Connection terminated|pool raised an error|ECONNRESET|ECONNREFUSED/i;

/** The host's stdout and stderr lines that say so. */
export function deadConnectionLines(host: ChildHost): string[] {
  return [...host.lines.map((line) => JSON.stringify(line)), ...host.stderr().split('\n')].filter(
    (line) => DEAD_CONNECTION_LINE.test(line),
  );
}
