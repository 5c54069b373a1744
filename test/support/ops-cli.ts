import type { DynamicModule, Type } from '@nestjs/common';
import { runOps } from '../../apps/pin-notifications/src/ops/run-ops';

export interface OpsRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = Record<string, unknown>>(): T;
}

/** Runs `npm run ops -- <argv>` in this process, against the given database. */
export async function ops(
  argv: readonly string[],
  databaseUrl: string | undefined,
  imports: ReadonlyArray<Type | DynamicModule> = [],
  env: NodeJS.ProcessEnv = {},
): Promise<OpsRun> {
  let stdout = '';
  let stderr = '';
  const code = await runOps(
    argv,
    { env: { ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), ...env }, imports },
    { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) },
  );
  return { code, stdout, stderr, json: <T>() => JSON.parse(stdout) as T };
}

/** Splits a command line as a shell would for the simple quoting runbooks use ("…" and '…'). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) words.push(match[1] ?? match[2] ?? match[3] ?? '');
  return words;
}
