import { Module, type DynamicModule } from '@nestjs/common';
import {
  ChannelCommand,
  ChannelPauseCommand,
  ChannelResumeCommand,
} from './commands/channel.command';
import { CycleCommand, CycleRunCommand } from './commands/cycle.command';
import { LeaseCommand, LeaseReleaseCommand } from './commands/lease.command';
import { RedriveCommand } from './commands/redrive.command';
import { StatusCommand } from './commands/status.command';
import {
  TerminalCommand,
  TerminalListCommand,
  TerminalStatsCommand,
} from './commands/terminal.command';
import { OPS_IO, type OpsIo } from './ops-io';
import { OpsOutput } from './ops-output';
import { OpsRunState } from './ops-run-state';
import { OPS_SETTINGS, type OpsSettings } from './ops-settings';
import { OpsWorkspace } from './ops-workspace';
import { CommanderTreeSettings } from './commander-tree-settings';

/** The ops CLI's commands. Cheap to build: the database is opened by the first command that needs it. */
@Module({})
export class OpsModule {
  static forRoot(settings: OpsSettings, io: OpsIo, state: OpsRunState): DynamicModule {
    return {
      module: OpsModule,
      providers: [
        { provide: OPS_SETTINGS, useValue: settings },
        { provide: OPS_IO, useValue: io },
        { provide: OpsRunState, useValue: state },
        OpsOutput,
        OpsWorkspace,
        CommanderTreeSettings,
        StatusCommand,
        TerminalCommand,
        TerminalListCommand,
        TerminalStatsCommand,
        RedriveCommand,
        ChannelCommand,
        ChannelPauseCommand,
        ChannelResumeCommand,
        CycleCommand,
        CycleRunCommand,
        LeaseCommand,
        LeaseReleaseCommand,
      ],
    };
  }
}
