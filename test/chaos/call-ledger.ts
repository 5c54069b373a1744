import { Pool } from 'pg';
import { LEDGER_APP_PREFIX } from './chaos-config';
import type { FaultKind } from './fault-plan';

/**
 * The events a call can record after `started`: its outcome (for a late
 * success, when the provider accepted the message) and, for answers that come
 * only after the signal or the timeout, `answered` when the adapter returned.
 */
export type LedgerOutcome = 'succeeded' | 'retriable' | 'non-retriable' | 'throttled' | 'hang';
export type LedgerEvent = 'started' | LedgerOutcome | 'answered';

export interface StartedCall {
  /** The ledger id of the `started` event: every later event of the call refers to it. */
  readonly callId: string;
  readonly callNo: number;
  /** The provider message id of an earlier successful call: the provider deduplicates on it. */
  readonly priorProviderMessageId: string | null;
}

/**
 * Every provider call, recorded on the ledger's own pool in autocommit mode:
 * each INSERT commits at once, whatever becomes of the worker's transaction,
 * so the ledger shows calls whose outcome was never committed (crashes).
 * `callNo` counts the row's calls and picks the fault; two calls started at
 * once may share it, `callId` never.
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
    const { rows } = await this.pool.query<{ id: string }>(
      `INSERT INTO chaos_ledger (notification_id, call_no, instance, os_pid, event, attempts)
       VALUES ($1, $2, $3, $4, 'started', $5) RETURNING id::text`,
      [notificationId, callNo, this.instanceId, process.pid, attempts],
    );
    return { callId: rows[0].id, callNo, priorProviderMessageId: prior[0].pmid };
  }

  async record(
    call: StartedCall,
    notificationId: string,
    event: LedgerOutcome | 'answered',
    fault: FaultKind | 'deduplicated',
    providerMessageId: string | null = null,
  ): Promise<void> {
    await this.pool.query(
      `INSERT INTO chaos_ledger
         (call_id, notification_id, call_no, instance, os_pid, event, fault, provider_message_id,
          deduplicated)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        call.callId,
        notificationId,
        call.callNo,
        this.instanceId,
        process.pid,
        event,
        fault,
        providerMessageId,
        fault === 'deduplicated',
      ],
    );
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
