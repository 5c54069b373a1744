import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { SqlRunner } from '../persistence/sql-runner';
import { decodeCursor, nextCursor } from './keyset-cursor';
import { validatePageLimit } from './page-limit';
import { optionalDate, optionalText } from './query-values';
import { compileSearchOperatorActions } from './sql/search-operator-actions.sql';

export interface OperatorAuditQuery {
  readonly actor?: string;
  readonly action?: string;
  readonly since?: Date;
  /** Audit rows whose reason contains this text (any case). */
  readonly text?: string;
  readonly after?: string;
  /** 1..200, default 50. */
  readonly limit?: number;
}

export interface OperatorAuditEntry {
  readonly id: string;
  readonly action: string;
  readonly actor: string;
  readonly reason: string;
  /** The filter or target of the action, no personal data. */
  readonly filter: Record<string, unknown>;
  readonly rows: number;
  readonly createdAt: Date;
}

export interface OperatorAuditPage {
  readonly rows: OperatorAuditEntry[];
  readonly next: string | null;
}

export const DEFAULT_AUDIT_LIST_LIMIT = 50;
export const MAX_AUDIT_LIST_LIMIT = 200;
const SCOPE = 'operator-actions';

/** `notification_operator_actions`, newest first: who changed what, when and why. */
@Injectable()
export class OperatorAuditLog {
  private readonly statement: ReturnType<typeof compileSearchOperatorActions>;

  constructor(
    @InjectNotificationsRetryDataSource() dataSource: DataSource,
    private readonly sql: SqlRunner,
  ) {
    this.statement = compileSearchOperatorActions(dataSource);
  }

  async search(query: OperatorAuditQuery = {}): Promise<OperatorAuditPage> {
    const actor = optionalText('actor', query.actor);
    const action = optionalText('action', query.action);
    const since = optionalDate('since', query.since);
    const text = optionalText('text', query.text, 500);
    const limit = validatePageLimit(query.limit, {
      default: DEFAULT_AUDIT_LIST_LIMIT,
      max: MAX_AUDIT_LIST_LIMIT,
    });
    const after = decodeCursor(SCOPE, query.after);
    const rows = await this.sql.run<OperatorAuditEntry & { keyAt: string; keyId: string }>(
      this.statement,
      this.statement.values({
        actor: actor ?? null,
        action: action ?? null,
        since: since ?? null,
        pattern: text === undefined ? null : `%${escapeLike(text)}%`,
        afterAt: after?.at ?? null,
        afterId: after?.id ?? null,
        limit,
      }),
    );
    return {
      rows: rows.map((row) => ({
        id: row.id,
        action: row.action,
        actor: row.actor,
        reason: row.reason,
        filter: row.filter,
        rows: row.rows,
        createdAt: row.createdAt,
      })),
      next: nextCursor(SCOPE, rows, limit),
    };
  }
}

/** `text` as itself inside an ILIKE pattern: `%`, `_` and `\` match only themselves. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}
