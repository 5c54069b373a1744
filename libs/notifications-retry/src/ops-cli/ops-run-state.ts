import { Injectable } from '@nestjs/common';
import { OpsExitCode } from './ops-exit-code';

/** What one CLI run ends with: set by the command, read by `runOps`. */
@Injectable()
export class OpsRunState {
  exitCode: OpsExitCode = OpsExitCode.Ok;
  /** The command asked for JSON: errors are printed as JSON too. */
  json = false;
}
