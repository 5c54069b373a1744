import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * An executable the tests run for real: on PATH, or in one of `extraDirs`
 * (where Debian's packages put daemons, which a non-root PATH often lacks).
 * Throws `notInstalled` when it is nowhere.
 */
export function installedBinary(
  name: string,
  extraDirs: readonly string[],
  notInstalled: string,
): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), ...extraDirs];
  for (const dir of dirs.filter(Boolean)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(notInstalled);
}
