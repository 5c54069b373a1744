import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import {
  DEFAULT_TERMINAL_LIST_LIMIT,
  MAX_TERMINAL_LIST_LIMIT,
  TerminalFailures,
} from '../../operations/terminal-failures';
import { OpsArgumentError } from '../ops-argument.error';
import { parsePositiveInteger } from '../ops-arguments';
import { OpsOutput } from '../ops-output';
import { iso, table } from '../ops-text';
import { OpsWorkspace } from '../ops-workspace';
import { requireKnownChannel } from '../known-channel';
import { JSON_OPTION, type JsonOption } from './json-option';
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

type ListOptions = TerminalFilterOptions & JsonOption & { readonly limit?: number };

@SubCommand({ name: 'list', description: 'terminal Failed rows, newest first, addresses masked' })
export class TerminalListCommand extends CommandRunner {
  constructor(
    private readonly workspace: OpsWorkspace,
    private readonly output: OpsOutput,
  ) {
    super();
  }

  async run(_args: string[], options: ListOptions = {}): Promise<void> {
    if (options.channel !== undefined) {
      await requireKnownChannel(this.workspace, 'terminal list', '--channel', options.channel);
    }
    const rows = await (
      await this.workspace.get(TerminalFailures)
    ).list(filterOf(options), options.limit ?? DEFAULT_TERMINAL_LIST_LIMIT);
    this.output.result(options.json, { rows }, () =>
      rows.length === 0
        ? 'no terminal Failed rows match'
        : table(
            ['ID', 'CHANNEL', 'ADDRESS', 'ATTEMPTS', 'ERROR CODE', 'FAILED AT', 'ERROR'],
            rows.map((r) => [
              r.id,
              r.channel,
              r.maskedAddress,
              r.attempts,
              r.errorCode,
              iso(r.failedAt),
              r.errorMessage,
            ]),
          ),
    );
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

  @Option({
    flags: '--limit <n>',
    description: `at most this many rows (default ${DEFAULT_TERMINAL_LIST_LIMIT})`,
  })
  parseLimit(value: string): number {
    return parsePositiveInteger('--limit', value, MAX_TERMINAL_LIST_LIMIT);
  }

  @Option(JSON_OPTION)
  parseJson(): boolean {
    return true;
  }
}

@SubCommand({
  name: 'stats',
  description: 'terminal Failed rows by channel × error code: count, oldest, newest',
})
export class TerminalStatsCommand extends CommandRunner {
  constructor(
    private readonly workspace: OpsWorkspace,
    private readonly output: OpsOutput,
  ) {
    super();
  }

  async run(_args: string[], options: TerminalFilterOptions & JsonOption = {}): Promise<void> {
    if (options.channel !== undefined) {
      await requireKnownChannel(this.workspace, 'terminal stats', '--channel', options.channel);
    }
    const stats = await (await this.workspace.get(TerminalFailures)).stats(filterOf(options));
    this.output.result(options.json, { stats }, () =>
      stats.length === 0
        ? 'no terminal Failed rows match'
        : table(
            ['CHANNEL', 'ERROR CODE', 'COUNT', 'OLDEST', 'NEWEST'],
            stats.map((s) => [s.channel, s.errorCode, s.count, iso(s.oldest), iso(s.newest)]),
          ),
    );
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

  @Option(JSON_OPTION)
  parseJson(): boolean {
    return true;
  }
}

@Command({
  name: 'terminal',
  description: 'terminal Failed rows: list, stats',
  subCommands: [TerminalListCommand, TerminalStatsCommand],
})
export class TerminalCommand extends CommandRunner {
  run(): Promise<void> {
    return Promise.reject(new OpsArgumentError('terminal needs a subcommand: list or stats'));
  }
}
