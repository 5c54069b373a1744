import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelCatalog, readCatalogChannels } from '../channels/channel-catalog';
import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';
import { OperationRefusedError } from '../errors/operation-refused.error';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { SqlRunner } from '../persistence/sql-runner';
import { validateOperatorContext, type OperatorContext } from './operator-context';
import { compileListChannelPauses } from './sql/list-channel-pauses.sql';
import { compilePauseChannel } from './sql/pause-channel.sql';
import { compileResumeChannel } from './sql/resume-channel.sql';

export interface ChannelPause {
  readonly channel: string;
  readonly reason: string;
  readonly pausedBy: string;
  readonly pausedAt: Date;
}

export interface ListedChannelPause extends ChannelPause {
  /** By the database clock. */
  readonly pausedForMs: number;
}

/** What a pause or resume did: `changed` false when the channel already was in that state (nothing audited). */
export interface ChannelPauseChange {
  readonly channel: string;
  readonly changed: boolean;
  readonly paused: boolean;
  /** The pause in force (pause) or the one lifted (resume); null when there was none. */
  readonly pause: ChannelPause | null;
}

interface PauseRow {
  channel: string;
  reason: string;
  pausedBy: string;
  pausedAt: Date;
}

/**
 * Operator pauses: a paused channel (`PausedChannels`) is left out of the claim (exclusion reason
 * `paused`), its rows wait untouched, no attempt is used. Unlike disabling it
 * in the catalog, a pause says who and why, is audited, and does not depend on
 * who owns the catalog. Both directions are idempotent.
 */
@Injectable()
export class ChannelPauses {
  private readonly statements: {
    readonly pause: ReturnType<typeof compilePauseChannel>;
    readonly resume: ReturnType<typeof compileResumeChannel>;
    readonly list: ReturnType<typeof compileListChannelPauses>;
  };

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly catalog: ChannelCatalog,
    private readonly sql: SqlRunner,
  ) {
    this.statements = {
      pause: compilePauseChannel(dataSource),
      resume: compileResumeChannel(dataSource),
      list: compileListChannelPauses(dataSource),
    };
  }

  async pause(channel: string, operator: OperatorContext): Promise<ChannelPauseChange> {
    const key = await this.knownChannel(channel);
    const { actor, reason } = validateOperatorContext(operator);
    const { pause } = this.statements;
    const rows = await this.sql.run<PauseRow>(pause, pause.values({ channel: key, reason, actor }));
    if (rows[0]) return { channel: key, changed: true, paused: true, pause: toPause(rows[0]) };
    const current = (await this.list()).find((pause) => pause.channel === key) ?? null;
    return { channel: key, changed: false, paused: true, pause: current };
  }

  async resume(channel: string, operator: OperatorContext): Promise<ChannelPauseChange> {
    const key = validKey(channel);
    const { actor, reason } = validateOperatorContext(operator);
    const { resume } = this.statements;
    const rows = await this.sql.run<PauseRow>(
      resume,
      resume.values({ channel: key, reason, actor }),
    );
    return {
      channel: key,
      changed: rows.length > 0,
      paused: false,
      pause: rows[0] ? toPause(rows[0]) : null,
    };
  }

  async list(): Promise<ListedChannelPause[]> {
    const { list } = this.statements;
    const rows = await this.sql.run<PauseRow & { pausedForMs: string }>(list, list.values({}));
    return rows.map((row) => ({ ...toPause(row), pausedForMs: Number(row.pausedForMs) }));
  }

  /** A typo must not look like a successful pause while the real channel keeps sending. */
  private async knownChannel(channel: string): Promise<string> {
    const key = validKey(channel);
    const catalog = await readCatalogChannels(this.catalog);
    const known = new Set([...catalog.channels.map((c) => c.key), ...catalog.invalid]);
    if (!known.has(key)) {
      throw new OperationRefusedError(
        'channel pause',
        `the channel catalog has no channel "${key}" (known: ${[...known].sort().join(', ') || 'none'})`,
      );
    }
    return key;
  }
}

function validKey(channel: string): string {
  if (typeof channel !== 'string' || channel.trim() === '' || channel.trim().length > 200) {
    throw new InvalidOperationInputError(
      'channel',
      `must be a channel key (non-empty, at most 200 characters); got ${JSON.stringify(channel)}`,
    );
  }
  return channel.trim();
}

function toPause(row: PauseRow): ChannelPause {
  return {
    channel: row.channel,
    reason: row.reason,
    pausedBy: row.pausedBy,
    pausedAt: row.pausedAt,
  };
}
