import {
  InvalidModuleOptionsError,
  InvalidOperationInputError,
  NotificationsRetryError,
  OperationRefusedError,
} from '@pin/notifications-retry';
import { CommandFactory, CommandRunnerService } from 'nest-commander';
import { InvalidEnvironmentVariableError } from '../config/invalid-environment-variable.error';
import { OpsArgumentError } from './ops-argument.error';
import { OpsExitCode } from './ops-exit-code';
import type { OpsIo } from './ops-io';
import { OpsModule } from './ops.module';
import { OpsRunState } from './ops-run-state';
import type { OpsSettings } from './ops-settings';

/** Commander's own errors (unknown option, missing argument, --help), recognised without importing its copy. */
interface CommanderLikeError {
  readonly code: string;
  readonly exitCode: number;
}

const isCommanderError = (error: unknown): error is CommanderLikeError =>
  error instanceof Error &&
  typeof (error as Partial<CommanderLikeError>).code === 'string' &&
  (error as unknown as CommanderLikeError).code.startsWith('commander.');

/**
 * Runs one ops command (`argv` without node and the script) and returns its
 * exit code: 0 done, 1 failed, 2 bad arguments, 3 refused. Never exits the
 * process itself, so tests run it in-process exactly as `npm run ops` does.
 */
export async function runOps(
  argv: readonly string[],
  settings: OpsSettings,
  io: OpsIo,
): Promise<OpsExitCode> {
  const state = new OpsRunState();
  state.json = argv.includes('--json');
  let failure: unknown = null;
  const app = await CommandFactory.createWithoutRunning(OpsModule.forRoot(settings, io, state), {
    logger: false,
    cliName: 'ops',
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
    await app.get(CommandRunnerService).run(['node', 'ops', ...argv]);
  } finally {
    await app.close();
  }
  if (failure === null) return state.exitCode;
  return report(failure, state, io);
}

function report(error: unknown, state: OpsRunState, io: OpsIo): OpsExitCode {
  if (isCommanderError(error)) {
    // Help and version print and exit 0; anything else commander has already explained on stderr.
    return error.exitCode === 0 ? OpsExitCode.Ok : OpsExitCode.BadArguments;
  }
  const code = exitCodeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const kind =
    error instanceof NotificationsRetryError
      ? error.code
      : error instanceof OpsArgumentError || error instanceof InvalidEnvironmentVariableError
        ? 'bad_arguments'
        : 'failure';
  if (state.json) io.stdout(`${JSON.stringify({ error: { code: kind, message } }, null, 2)}\n`);
  io.stderr(`ops: ${code === OpsExitCode.Refused ? 'refused: ' : ''}${message}\n`);
  return code;
}

function exitCodeOf(error: unknown): OpsExitCode {
  if (error instanceof OperationRefusedError) return OpsExitCode.Refused;
  if (
    error instanceof InvalidOperationInputError ||
    error instanceof OpsArgumentError ||
    error instanceof InvalidEnvironmentVariableError ||
    error instanceof InvalidModuleOptionsError
  ) {
    return OpsExitCode.BadArguments;
  }
  return OpsExitCode.Failure;
}
