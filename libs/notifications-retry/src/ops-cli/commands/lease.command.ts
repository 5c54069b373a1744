import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { LeaseRelease } from '../../operations/lease-release';
import { OpsArgumentError } from '../ops-argument.error';
import { parsePositiveInteger, parseText } from '../ops-arguments';
import { OpsOutput } from '../ops-output';
import { OpsWorkspace } from '../ops-workspace';
import { JSON_OPTION, type JsonOption } from './json-option';
import { ACTOR_OPTION, REASON_OPTION, parseActor, parseReason } from './operator-options';

type ReleaseOptions = JsonOption & {
  readonly fencingToken?: number;
  readonly owner?: string;
  readonly key?: string;
  readonly reason?: string;
  readonly actor?: string;
};

@SubCommand({
  name: 'release',
  description:
    'release the worker lease: an expired one, or a live one whose --owner you name; at the --fencing-token status shows',
})
export class LeaseReleaseCommand extends CommandRunner {
  constructor(
    private readonly workspace: OpsWorkspace,
    private readonly output: OpsOutput,
  ) {
    super();
  }

  async run(_args: string[], options: ReleaseOptions = {}): Promise<void> {
    if (options.fencingToken === undefined) {
      throw new OpsArgumentError('lease release needs --fencing-token (shown by status)');
    }
    if (options.reason === undefined) throw new OpsArgumentError('lease release needs --reason');
    const result = await (
      await this.workspace.get(LeaseRelease)
    ).release({
      fencingToken: options.fencingToken,
      ...(options.key !== undefined ? { key: options.key } : {}),
      ...(options.owner !== undefined ? { owner: options.owner } : {}),
      operator: { actor: options.actor ?? this.workspace.defaultActor(), reason: options.reason },
    });
    this.output.result(options.json, result, () =>
      result.wasLive
        ? `released the live lease ${result.key} of ${result.owner} (fencing token ${result.fencingToken}); its writes are refused from now on`
        : `lease ${result.key} of ${result.owner} (fencing token ${result.fencingToken}) had already expired; recorded`,
    );
  }

  @Option({
    flags: '--fencing-token <n>',
    description: 'the fencing token status shows (required)',
  })
  parseFencingToken(value: string): number {
    return parsePositiveInteger('--fencing-token', value, Number.MAX_SAFE_INTEGER);
  }

  @Option({ flags: '--owner <owner>', description: 'the owner of a live lease to cut off' })
  parseOwner(value: string): string {
    return parseText('--owner', value);
  }

  @Option({ flags: '--key <key>', description: 'lease key (default: the worker lockKey)' })
  parseKey(value: string): string {
    return parseText('--key', value);
  }

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
  name: 'lease',
  description: 'the worker lease: release',
  subCommands: [LeaseReleaseCommand],
})
export class LeaseCommand extends CommandRunner {
  run(): Promise<void> {
    return Promise.reject(new OpsArgumentError('lease needs a subcommand: release'));
  }
}
