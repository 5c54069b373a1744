import { Pool } from 'pg';
import { LEDGER_APP_PREFIX } from './chaos-config';

/** The outcome events a call can record after `started`. */
export type LedgerOutcome = 'succeeded' | 'retriable' | 'non-retriable' | 'throttled' | 'hang';

export interface StartedCall {
  readonly callNo: number;
  /** The provider message id of an earlier successful call: the provider deduplicates on it. */
  readonly priorProviderMessageId: string | null;
}

/**
 * Every provider call, recorded on the ledger's own pool in autocommit mode:
 * each INSERT commits at once, whatever becomes of the worker's transaction,
 * so the ledger shows calls whose outcome was never committed (crashes).
 */
export class CallLedger {
  private readonly pool: Pool;

  constructor(
    databaseUrl: string,
    private readonly instanceId: string,
  ) {
    this.pool = new Pool({
      connectionString: databaseUrl,
      application_name: `${LEDGER_APP_PREFIX}${instanceId}`.slice(0, 63),
      max: 12,
    });
    // An idle connection cut by the server must not crash the process.
    this.pool.on('error', () => undefined);
  }

  async started(notificationId: string, attempts: number): Promise<StartedCall> {
    const { rows: prior } = await this.pool.query<{ calls: number; pmid: string | null }>(
      `SELECT count(*) FILTER (WHERE event = 'started')::int AS calls,
              min(provider_message_id) FILTER (WHERE event = 'succeeded') AS pmid
         FROM chaos_ledger WHERE notification_id = $1`,
      [notificationId],
    );
    const callNo = prior[0].calls + 1;
    await this.pool.query(
      `INSERT INTO chaos_ledger (notification_id, call_no, instance, os_pid, event, attempts)
       VALUES ($1, $2, $3, $4, 'started', $5)`,
      [notificationId, callNo, this.instanceId, process.pid, attempts],
    );
    return { callNo, priorProviderMessageId: prior[0].pmid };
  }

  async outcome(
    notificationId: string,
    callNo: number,
    event: LedgerOutcome,
    providerMessageId: string | null = null,
    deduplicated = false,
  ): Promise<void> {
    await this.pool.query(
      `INSERT INTO chaos_ledger
         (notification_id, call_no, instance, os_pid, event, provider_message_id, deduplicated)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        notificationId,
        callNo,
        this.instanceId,
        process.pid,
        event,
        providerMessageId,
        deduplicated,
      ],
    );
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
