import { Command, CommandRunner, Option } from 'nest-commander';
import { OperationsStatus, type OperationsStatusReport } from '../../operations/operations-status';
import { OpsOutput } from '../ops-output';
import { iso, table } from '../ops-text';
import { OpsWorkspace } from '../ops-workspace';
import { JSON_OPTION, type JsonOption } from './json-option';

@Command({
  name: 'status',
  description:
    'lease owner, fencing token and expiry (database time); last cycle; backlog and due rows per channel; channels left out and why; live claims',
})
export class StatusCommand extends CommandRunner {
  constructor(
    private readonly workspace: OpsWorkspace,
    private readonly output: OpsOutput,
  ) {
    super();
  }

  async run(_args: string[], options: JsonOption = {}): Promise<void> {
    const report = await (await this.workspace.get(OperationsStatus)).status();
    this.output.result(options.json, report, () => renderStatus(report));
  }

  @Option(JSON_OPTION)
  parseJson(): boolean {
    return true;
  }
}

export function renderStatus(report: OperationsStatusReport): string {
  const lines: string[] = [];
  const lease = report.lease;
  lines.push(
    lease
      ? `lease ${lease.key}: owner ${lease.owner}, fencing token ${lease.fencingToken}, ${lease.live ? 'live' : 'expired'} (expires ${iso(lease.expiresAt)}, database now ${iso(lease.databaseNow)})`
      : 'lease: none yet (no cycle has ever run)',
  );
  if (report.lastCycle) {
    lines.push(
      report.lastCycle.running
        ? `last cycle: running since ${iso(report.lastCycle.startedAt)} on ${report.lastCycle.owner}`
        : `last cycle: ${iso(report.lastCycle.startedAt)} to ${iso(report.lastCycle.endedAt)} on ${report.lastCycle.owner}`,
    );
  }
  lines.push('');
  lines.push(
    table(
      ['CHANNEL', 'BACKLOG', 'DUE', 'DEFERRED', 'TERMINAL', 'LIVE CLAIMS'],
      [
        ...report.channels.map((c) => [
          c.channel,
          c.backlog,
          c.due,
          c.deferred,
          c.terminal,
          c.liveClaims,
        ]),
        [
          '(total)',
          report.totals.backlog,
          report.totals.due,
          report.totals.deferred,
          report.totals.terminal,
          report.totals.liveClaims,
        ],
      ],
    ),
  );
  lines.push('');
  lines.push(
    `left out of the claim: ${report.excludedChannels.map((e) => `${e.channel} (${e.reason})`).join(', ') || 'none'}`,
  );
  for (const pause of report.pausedChannels) {
    lines.push(
      `paused: ${pause.channel} since ${iso(pause.pausedAt)} (${Math.round(pause.pausedForMs / 60_000)} min) by ${pause.pausedBy}: ${pause.reason}`,
    );
  }
  const open = Object.entries(report.circuits).filter(([, state]) => state !== 'closed');
  if (open.length > 0)
    lines.push(`circuits (this process): ${open.map(([p, s]) => `${p} ${s}`).join(', ')}`);
  lines.push(
    `live claims: ${report.totals.liveClaims}; calls in flight (this process): ${report.callsInFlight}`,
  );
  return lines.join('\n');
}
