import type { DynamicModule, Type } from '@nestjs/common';
import { CommandFactory, CommandRunnerService } from 'nest-commander';
import { InvalidModuleOptionsError } from '../errors/invalid-module-options.error';
import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';
import { NotificationsRetryError } from '../errors/notifications-retry.error';
import { OperationRefusedError } from '../errors/operation-refused.error';
import { OpsArgumentError } from './ops-argument.error';
import { OpsDatabaseUnreachableError } from './ops-database-unreachable.error';
import { OpsExitCode } from './ops-exit-code';
import { OPS_IO, PROCESS_IO, type OpsIo } from './ops-io';
import { OpsRunState } from './ops-run-state';

/** Commander's own errors (unknown option, missing argument, --help), recognised without importing its copy. */
interface CommanderLikeError {
  readonly code: string;
  readonly exitCode: number;
  readonly message: string;
}

const isCommanderError = (error: unknown): error is CommanderLikeError =>
  error instanceof Error &&
  typeof (error as Partial<CommanderLikeError>).code === 'string' &&
  (error as unknown as CommanderLikeError).code.startsWith('commander.');

export interface RunNotificationsRetryOpsOptions {
  /** The program name help and errors show; default `ops`. */
  readonly cliName?: string;
}

/**
 * Runs one command line (`argv` without node and the script) on a
 * nest-commander root that mounts `NotificationsRetryOpsModule` (and any
 * commands of the host's), and returns the exit code: 0 done, 1 failed,
 * 2 bad arguments or environment, 3 refused. Never exits the process itself.
 */
export async function runNotificationsRetryOps(
  root: Type | DynamicModule,
  argv: readonly string[],
  options: RunNotificationsRetryOpsOptions = {},
): Promise<OpsExitCode> {
  let io: OpsIo = PROCESS_IO;
  let state = new OpsRunState();
  let failure: unknown = null;
  const app = await CommandFactory.createWithoutRunning(root, {
    logger: false,
    cliName: options.cliName ?? 'ops',
    // Thrown instead of process.exit(), to be mapped to an exit code below.
    errorHandler: (error) => {
      throw error;
    },
    serviceErrorHandler: (error) => {
      failure = error;
    },
    outputConfiguration: {
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
    },
  });
  try {
    io = app.get<OpsIo>(OPS_IO, { strict: false });
    state = app.get(OpsRunState, { strict: false });
    state.json = argv.includes('--json');
    await app.get(CommandRunnerService).run(['node', options.cliName ?? 'ops', ...argv]);
  } catch (error) {
    failure ??= error;
  } finally {
    await app.close();
  }
  if (failure === null) return state.exitCode;
  return report(failure, state, io);
}

function report(error: unknown, state: OpsRunState, io: OpsIo): OpsExitCode {
  if (isCommanderError(error)) {
    // Help and version print and exit 0; anything else commander has already explained on stderr.
    if (error.exitCode === 0) return OpsExitCode.Ok;
    if (state.json) printJson(io, 'bad_arguments', error.message.replace(/^error: /, ''));
    return OpsExitCode.BadArguments;
  }
  const code = exitCodeOf(error);
  const message = messageOf(error);
  if (state.json) printJson(io, kindOf(error), message);
  io.stderr(`ops: ${code === OpsExitCode.Refused ? 'refused: ' : ''}${message}\n`);
  return code;
}

function printJson(io: OpsIo, code: string, message: string): void {
  io.stdout(`${JSON.stringify({ error: { code, message } }, null, 2)}\n`);
}

/** The library names an input by its API field (`errorCode`); the CLI user typed a flag (`--error-code`). */
function messageOf(error: unknown): string {
  if (error instanceof InvalidOperationInputError && error.option !== 'filter') {
    return `--${error.option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${error.problem}`;
  }
  return error instanceof Error ? error.message : String(error);
}

function kindOf(error: unknown): string {
  if (error instanceof OpsDatabaseUnreachableError) return 'database_unreachable';
  if (error instanceof OpsArgumentError) return 'bad_arguments';
  if (error instanceof NotificationsRetryError) return error.code;
  return 'failure';
}

function exitCodeOf(error: unknown): OpsExitCode {
  if (error instanceof OperationRefusedError) return OpsExitCode.Refused;
  if (
    error instanceof InvalidOperationInputError ||
    error instanceof OpsArgumentError ||
    error instanceof OpsDatabaseUnreachableError ||
    error instanceof InvalidModuleOptionsError
  ) {
    return OpsExitCode.BadArguments;
  }
  return OpsExitCode.Failure;
}
