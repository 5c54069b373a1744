import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { RetryCycleService } from '../../cycle/retry-cycle.service';
import type { CycleReport } from '../../vocabulary/cycle-report';
import { OpsArgumentError } from '../ops-argument.error';
import { OpsExitCode } from '../ops-exit-code';
import { OpsOutput } from '../ops-output';
import { OpsRunState } from '../ops-run-state';
import { OpsWorkspace } from '../ops-workspace';
import { JSON_OPTION, type JsonOption } from './json-option';

@SubCommand({
  name: 'run',
  description:
    'run one cycle now from this process (takes the lease like any instance) and print its report',
})
export class CycleRunCommand extends CommandRunner {
  constructor(
    private readonly workspace: OpsWorkspace,
    private readonly output: OpsOutput,
    private readonly state: OpsRunState,
  ) {
    super();
  }

  async run(
    _args: string[],
    options: JsonOption & { readonly drain?: boolean } = {},
  ): Promise<void> {
    if (options.drain) this.workspace.enableDrain();
    const report = await (await this.workspace.get(RetryCycleService)).runCycle();
    // Skipped (another instance holds the lease): nothing ran, a script must be able to tell.
    if (report.status === 'skipped') this.state.exitCode = OpsExitCode.Refused;
    this.output.result(options.json, report, () => renderReport(report));
  }

  @Option({
    flags: '--drain',
    description:
      'keep claiming batches while they come back full and the deadline allows (after an outage)',
  })
  parseDrain(): boolean {
    return true;
  }

  @Option(JSON_OPTION)
  parseJson(): boolean {
    return true;
  }
}

@Command({ name: 'cycle', description: 'run a cycle now', subCommands: [CycleRunCommand] })
export class CycleCommand extends CommandRunner {
  run(): Promise<void> {
    return Promise.reject(new OpsArgumentError('cycle needs a subcommand: run'));
  }
}

function renderReport(report: CycleReport): string {
  if (report.status === 'skipped')
    return `cycle skipped: ${report.skipReason} (run ${report.runId})`;
  const c = report.counts;
  const lines = [
    `cycle ${report.runId} completed in ${report.durationMs} ms (${report.stopReason}), fencing token ${report.fencingToken}`,
    `processed ${c.processed}: sent ${c.sent}, retried ${c.retried}, terminal ${c.terminal}, deferred ${c.deferred}, skipped ${c.skipped}, errors ${c.errors}`,
  ];
  if (report.excludedChannels.length > 0) {
    lines.push(
      `left out: ${report.excludedChannels.map((e) => `${e.channel} (${e.reason}, ${e.dueRows} due)`).join(', ')}`,
    );
  }
  return lines.join('\n');
}
