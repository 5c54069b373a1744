import type { DynamicModule, Type } from '@nestjs/common';
import { runPinOps } from '../../apps/pin-notifications/src/ops/run-pin-ops';

export interface OpsRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = Record<string, unknown>>(): T;
}

/** Buffers for a run's stdout and stderr, and the run read back from them. */
export function capturedIo(): {
  io: { stdout: (text: string) => void; stderr: (text: string) => void };
  result: (code: number) => OpsRun;
} {
  let stdout = '';
  let stderr = '';
  return {
    io: { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) },
    result: (code) => ({ code, stdout, stderr, json: <T>() => JSON.parse(stdout) as T }),
  };
}

/** Runs `npm run ops -- <argv>` in this process (the Pin app's own module graph), against the given database. */
export async function ops(
  argv: readonly string[],
  databaseUrl: string | undefined,
  imports: ReadonlyArray<Type | DynamicModule> = [],
  env: NodeJS.ProcessEnv = {},
): Promise<OpsRun> {
  const { io, result } = capturedIo();
  const code = await runPinOps(argv, {
    env: { ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), ...env },
    imports,
    io,
  });
  return result(code);
}

/** Splits a command line as a shell would for the simple quoting runbooks use ("…" and '…'). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) words.push(match[1] ?? match[2] ?? match[3] ?? '');
  return words;
}
