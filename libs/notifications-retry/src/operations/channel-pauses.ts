import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelCatalog, readCatalogChannels } from '../channels/channel-catalog';
import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';
import { OperationRefusedError } from '../errors/operation-refused.error';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { validateOperatorContext, type OperatorContext } from './operator-context';
import { LIST_CHANNEL_PAUSES_SQL } from './sql/list-channel-pauses.sql';
import { PAUSE_CHANNEL_SQL } from './sql/pause-channel.sql';
import { PAUSED_CHANNEL_KEYS_SQL } from './sql/paused-channel-keys.sql';
import { RESUME_CHANNEL_SQL } from './sql/resume-channel.sql';

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
  paused_by: string;
  paused_at: Date;
}

/**
 * Operator pauses: a paused channel is left out of the claim (exclusion reason
 * `paused`), its rows wait untouched, no attempt is used. Unlike disabling it
 * in the catalog, a pause says who and why, is audited, and does not depend on
 * who owns the catalog. Both directions are idempotent.
 */
@Injectable()
export class ChannelPauses {
  constructor(
    @InjectNotificationsRetryDataSource() private readonly dataSource: DataSource,
    private readonly catalog: ChannelCatalog,
  ) {}

  async pause(channel: string, operator: OperatorContext): Promise<ChannelPauseChange> {
    const key = await this.knownChannel(channel);
    const { actor, reason } = validateOperatorContext(operator);
    const rows: PauseRow[] = await this.dataSource.query(PAUSE_CHANNEL_SQL, [key, reason, actor]);
    if (rows[0]) return { channel: key, changed: true, paused: true, pause: toPause(rows[0]) };
    const current = (await this.list()).find((pause) => pause.channel === key) ?? null;
    return { channel: key, changed: false, paused: true, pause: current };
  }

  async resume(channel: string, operator: OperatorContext): Promise<ChannelPauseChange> {
    const key = validKey(channel);
    const { actor, reason } = validateOperatorContext(operator);
    const rows: PauseRow[] = await this.dataSource.query(RESUME_CHANNEL_SQL, [key, reason, actor]);
    return {
      channel: key,
      changed: rows.length > 0,
      paused: false,
      pause: rows[0] ? toPause(rows[0]) : null,
    };
  }

  async list(): Promise<ListedChannelPause[]> {
    const rows: Array<PauseRow & { paused_for_ms: string }> =
      await this.dataSource.query(LIST_CHANNEL_PAUSES_SQL);
    return rows.map((row) => ({ ...toPause(row), pausedForMs: Number(row.paused_for_ms) }));
  }

  /** The keys the cycle leaves out; read once per cycle. */
  async pausedKeys(): Promise<ReadonlySet<string>> {
    const rows: Array<{ channel: string }> = await this.dataSource.query(PAUSED_CHANNEL_KEYS_SQL);
    return new Set(rows.map((row) => row.channel));
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
    pausedBy: row.paused_by,
    pausedAt: row.paused_at,
  };
}
