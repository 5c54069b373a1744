import { Module, type DynamicModule } from '@nestjs/common';
import { CommanderTreeSettings } from './commander-tree-settings';
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
import {
  NOTIFICATIONS_RETRY_OPS_OPTIONS,
  type NotificationsRetryOpsOptions,
} from './notifications-retry-ops-options';
import { OPS_IO, PROCESS_IO } from './ops-io';
import { OpsOutput } from './ops-output';
import { OpsRunState } from './ops-run-state';
import { OpsWorkspace } from './ops-workspace';

/**
 * The library's ops commands (status, terminal, redrive, channel, cycle,
 * lease), to mount in a nest-commander root: alone, or beside a host's own
 * commands. Cheap to build: the host's module is opened by the first command
 * that needs the database. Run the root with `runNotificationsRetryOps` for
 * the exit codes and `--json` errors.
 */
@Module({})
export class NotificationsRetryOpsModule {
  static forRoot(options: NotificationsRetryOpsOptions): DynamicModule {
    return {
      module: NotificationsRetryOpsModule,
      providers: [
        { provide: NOTIFICATIONS_RETRY_OPS_OPTIONS, useValue: options },
        { provide: OPS_IO, useValue: options.io ?? PROCESS_IO },
        // A class provider: a new state per run, even when a host's root module class is reused.
        OpsRunState,
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
      exports: [OPS_IO, OpsRunState, OpsOutput, OpsWorkspace],
    };
  }
}
