import { Command, CommandRunner, Option } from 'nest-commander';
import { TerminalRedrive, type RedriveResult } from '../../operations/terminal-redrive';
import { OpsArgumentError } from '../ops-argument.error';
import { parseIds } from '../ops-arguments';
import { OpsOutput } from '../ops-output';
import { table } from '../ops-text';
import { OpsWorkspace } from '../ops-workspace';
import { requireKnownChannel } from '../known-channel';
import { JSON_OPTION, type JsonOption } from './json-option';
import { ACTOR_OPTION, REASON_OPTION, parseActor, parseReason } from './operator-options';
import {
  CHANNEL_OPTION,
  ERROR_CODE_OPTION,
  SINCE_OPTION,
  filterOf,
  parseChannel,
  parseErrorCode,
  parseSinceOption,
  type TerminalFilterOptions,
} from './terminal-filter-options';

type RedriveOptions = TerminalFilterOptions &
  JsonOption & {
    readonly ids?: string[];
    readonly reason?: string;
    readonly actor?: string;
    readonly all?: boolean;
    readonly dryRun?: boolean;
    readonly yes?: boolean;
  };

@Command({
  name: 'redrive',
  description:
    'terminal Failed → Failed due now with a fresh attempt budget, in batches, audited; a dry run unless --yes',
})
export class RedriveCommand extends CommandRunner {
  constructor(
    private readonly workspace: OpsWorkspace,
    private readonly output: OpsOutput,
  ) {
    super();
  }

  async run(_args: string[], options: RedriveOptions = {}): Promise<void> {
    if (options.yes && options.dryRun) {
      throw new OpsArgumentError('--dry-run and --yes contradict each other: pass one');
    }
    const filter = { ...filterOf(options), ...(options.ids ? { ids: options.ids } : {}) };
    if (Object.keys(filter).length === 0 && options.all !== true) {
      throw new OpsArgumentError(
        'redrive needs a filter (--channel, --error-code, --since or --ids), or --all to redrive every terminal row',
      );
    }
    const apply = options.yes === true;
    if (apply && options.reason === undefined) {
      throw new OpsArgumentError(
        '--yes needs --reason: why these rows are redriven goes into the audit',
      );
    }
    if (options.channel !== undefined) {
      await requireKnownChannel(this.workspace, 'redrive', '--channel', options.channel);
    }
    const result = await (
      await this.workspace.get(TerminalRedrive)
    ).redrive({
      filter,
      all: options.all === true,
      dryRun: !apply,
      ...(apply
        ? {
            operator: {
              actor: options.actor ?? this.workspace.defaultActor(),
              reason: options.reason ?? '',
            },
          }
        : {}),
    });
    this.output.result(options.json, result, () => renderRedrive(result));
  }

  @Option(CHANNEL_OPTION)
  parseChannel(value: string): string {
    return parseChannel(value);
  }

  @Option(ERROR_CODE_OPTION)
  parseErrorCode(value: string): string {
    return parseErrorCode(value);
  }

  @Option(SINCE_OPTION)
  parseSince(value: string): Date {
    return parseSinceOption(value);
  }

  @Option({ flags: '--ids <ids>', description: 'only these notification ids, comma-separated' })
  parseIds(value: string): string[] {
    return parseIds(value);
  }

  @Option(REASON_OPTION)
  parseReason(value: string): string {
    return parseReason(value);
  }

  @Option(ACTOR_OPTION)
  parseActor(value: string): string {
    return parseActor(value);
  }

  @Option({ flags: '--all', description: 'allow a redrive with no filter (every terminal row)' })
  parseAll(): boolean {
    return true;
  }

  @Option({
    flags: '--dry-run',
    description: 'show what would be redriven, change nothing (the default)',
  })
  parseDryRun(): boolean {
    return true;
  }

  @Option({ flags: '--yes', description: 'apply the redrive (needs --reason)' })
  parseYes(): boolean {
    return true;
  }

  @Option(JSON_OPTION)
  parseJson(): boolean {
    return true;
  }
}

function renderRedrive(result: RedriveResult): string {
  const lines = [
    result.preview.length === 0
      ? 'no terminal Failed rows match'
      : table(
          ['CHANNEL', 'ERROR CODE', 'ELIGIBLE', 'LIVE CLAIM (LEFT ALONE)'],
          result.preview.map((g) => [g.channel, g.errorCode, g.eligible, g.claimed]),
        ),
    '',
  ];
  if (result.dryRun) {
    lines.push(
      `dry run: ${result.eligible} row(s) would be redriven, ${result.claimed} left alone (live claim). Nothing changed; add --yes --reason "…" to apply.`,
    );
  } else {
    lines.push(
      `redriven: ${result.redriven} row(s) in ${result.batches} batch(es), due now with a fresh attempt budget; audit action ${result.actionId}.`,
    );
  }
  return lines.join('\n');
}
