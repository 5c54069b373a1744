import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectCommander } from 'nest-commander';
import { OPS_IO, type OpsIo } from './ops-io';

/** The part of commander's Command this needs (nest-commander ships its own copy of commander). */
interface CommandNode {
  readonly commands: readonly CommandNode[];
  exitOverride(handler: (error: Error) => never): unknown;
  configureOutput(output: {
    writeOut: (text: string) => void;
    writeErr: (text: string) => void;
  }): unknown;
}

/**
 * nest-commander applies `errorHandler` and `outputConfiguration` to the root
 * command only; commander's subcommands do not inherit them, so a bad option
 * of `terminal list` would call process.exit(1) itself. Applied to every node
 * here: each error reaches runOps, which maps it to exit code 2.
 */
@Injectable()
export class CommanderTreeSettings implements OnApplicationBootstrap {
  constructor(
    @InjectCommander() private readonly root: CommandNode,
    @Inject(OPS_IO) private readonly io: OpsIo,
  ) {}

  onApplicationBootstrap(): void {
    const visit = (node: CommandNode): void => {
      node.exitOverride((error) => {
        throw error;
      });
      node.configureOutput({ writeOut: this.io.stdout, writeErr: this.io.stderr });
      node.commands.forEach(visit);
    };
    visit(this.root);
  }
}
