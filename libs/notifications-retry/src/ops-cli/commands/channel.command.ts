import { Injectable } from '@nestjs/common';
import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { ChannelPauses, type ChannelPauseChange } from '../../operations/channel-pauses';
import { OpsArgumentError } from '../ops-argument.error';
import { OpsOutput } from '../ops-output';
import { iso } from '../ops-text';
import { OpsWorkspace } from '../ops-workspace';
import { requireKnownChannel } from '../known-channel';
import { JSON_OPTION, type JsonOption } from './json-option';
import { ACTOR_OPTION, REASON_OPTION, parseActor, parseReason } from './operator-options';

type ChangeOptions = JsonOption & { readonly reason?: string; readonly actor?: string };

@Injectable()
abstract class ChannelChangeCommand extends CommandRunner {
  protected abstract readonly verb: 'pause' | 'resume';

  constructor(
    private readonly workspace: OpsWorkspace,
    private readonly output: OpsOutput,
  ) {
    super();
  }

  async run(args: string[], options: ChangeOptions = {}): Promise<void> {
    const [key] = args;
    if (key === undefined) throw new OpsArgumentError(`channel ${this.verb} needs a channel key`);
    if (options.reason === undefined) {
      throw new OpsArgumentError(`channel ${this.verb} needs --reason: it goes into the audit`);
    }
    await requireKnownChannel(this.workspace, `channel ${this.verb}`, '<key>', key);
    const pauses = await this.workspace.get(ChannelPauses);
    const operator = {
      actor: options.actor ?? this.workspace.defaultActor(),
      reason: options.reason,
    };
    const change =
      this.verb === 'pause'
        ? await pauses.pause(key, operator)
        : await pauses.resume(key, operator);
    this.output.result(options.json, change, () => renderChange(change));
  }
}

@SubCommand({
  name: 'pause',
  arguments: '<key>',
  description: 'leave a channel out of every cycle (its rows wait, no attempt used) until resumed',
})
export class ChannelPauseCommand extends ChannelChangeCommand {
  protected readonly verb = 'pause';

  @Option(REASON_OPTION)
  parseReason(value: string): string {
    return parseReason(value);
  }

  @Option(ACTOR_OPTION)
  parseActor(value: string): string {
    return parseActor(value);
  }

  @Option(JSON_OPTION)
  parseJson(): boolean {
    return true;
  }
}

@SubCommand({
  name: 'resume',
  arguments: '<key>',
  description: 'take a paused channel back into the cycle',
})
export class ChannelResumeCommand extends ChannelChangeCommand {
  protected readonly verb = 'resume';

  @Option(REASON_OPTION)
  parseReason(value: string): string {
    return parseReason(value);
  }

  @Option(ACTOR_OPTION)
  parseActor(value: string): string {
    return parseActor(value);
  }

  @Option(JSON_OPTION)
  parseJson(): boolean {
    return true;
  }
}

@Command({
  name: 'channel',
  description: 'pause or resume a channel (audited)',
  subCommands: [ChannelPauseCommand, ChannelResumeCommand],
})
export class ChannelCommand extends CommandRunner {
  run(): Promise<void> {
    return Promise.reject(new OpsArgumentError('channel needs a subcommand: pause or resume'));
  }
}

function renderChange(change: ChannelPauseChange): string {
  if (change.paused) {
    const since = change.pause
      ? ` since ${iso(change.pause.pausedAt)} by ${change.pause.pausedBy}: ${change.pause.reason}`
      : '';
    return change.changed
      ? `paused ${change.channel}${since}`
      : `${change.channel} was already paused${since}`;
  }
  return change.changed ? `resumed ${change.channel}` : `${change.channel} was not paused`;
}
