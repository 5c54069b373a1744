import { Inject, Injectable } from '@nestjs/common';
import { OPS_IO, type OpsIo } from './ops-io';
import { OpsRunState } from './ops-run-state';

/** Prints a command's result: JSON with `--json`, lines for people otherwise. */
@Injectable()
export class OpsOutput {
  constructor(
    @Inject(OPS_IO) private readonly io: OpsIo,
    private readonly state: OpsRunState,
  ) {}

  result(json: boolean | undefined, value: unknown, text: () => string): void {
    this.state.json = json === true;
    this.io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
  }
}
