import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { errorText } from '../vocabulary/error-text';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { detectConnectionPooler } from './detect-connection-pooler';
import { InjectNotificationsRetryDataSource } from './notifications-retry-data-source';

/**
 * A named statement the server connection did not have (26000,
 * invalid_sql_statement_name) or already had under that name (42P05,
 * duplicate_prepared_statement): `pg` keeps its list of prepared names per
 * client, so the client is not alone on its server connection.
 */
const FOREIGN_CONNECTION_SQLSTATES = new Set(['26000', '42P05']);

/**
 * Whether this process's statements are sent as named prepared statements:
 * decided once per process (`preparedStatements` true or false, or for
 * `'auto'` by probing one connection for a pooler in front of PostgreSQL),
 * and turned off for good by the first named statement that fails because
 * the connection does not keep them. Each decision is logged once, as a
 * `prepared-statements` line with its reason.
 */
@Injectable()
export class PreparedStatementMode implements OnApplicationBootstrap {
  private readonly logger = new Logger('NotificationsRetryDatabase');
  private decided: boolean | null = null;
  private deciding: Promise<boolean> | null = null;

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    @InjectNotificationsRetryDataSource() private readonly dataSource: DataSource,
  ) {}

  /** Where the worker runs, decide at start, so the log says it before the first cycle. */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.enabled) return;
    await this.named().catch((error: unknown) => {
      // The database may come up later; the first cycle asks again.
      this.logger.warn({
        msg: 'prepared-statements-detection-failed',
        event: 'prepared-statements-detection-failed',
        error: errorText(error),
      });
    });
  }

  /** True when statements are to be named. Rejects (and asks again next time) when a probe fails. */
  named(): Promise<boolean> {
    if (this.decided !== null) return Promise.resolve(this.decided);
    this.deciding ??= this.decide().finally(() => {
      this.deciding = null;
    });
    return this.deciding;
  }

  /**
   * Told of a named statement's failure. One the connection rejects as not
   * its own (at PARSE or BIND, so the statement never ran) switches this
   * process to unnamed statements, and the answer is true: the caller sends
   * the statement again, unnamed.
   */
  namedStatementFailed(error: unknown): boolean {
    const sqlState = (error as { code?: unknown } | null)?.code;
    if (typeof sqlState !== 'string' || !FOREIGN_CONNECTION_SQLSTATES.has(sqlState)) return false;
    if (this.decided === false) return true;
    this.decided = false;
    this.logger.warn({
      msg: 'prepared-statements',
      event: 'prepared-statements',
      named: false,
      reason: 'statement-error',
      sqlState,
      note: 'the connection does not keep named statements (a pooler in transaction mode?): unnamed from now on in this process',
    });
    return true;
  }

  private async decide(): Promise<boolean> {
    const setting = this.options.preparedStatements;
    if (setting !== 'auto') return this.settle(setting, { reason: 'option' });
    const probe = await detectConnectionPooler(this.dataSource);
    return this.settle(!probe.pooled, {
      reason: probe.pooled ? 'pooler-detected' : 'direct-connection',
      connectionProcessId: probe.connectionProcessId,
      backendPid: probe.backendPid,
    });
  }

  private settle(named: boolean, fields: { reason: string } & Record<string, unknown>): boolean {
    this.decided = named;
    this.logger.log({
      msg: 'prepared-statements',
      event: 'prepared-statements',
      named,
      preparedStatements: this.options.preparedStatements,
      ...fields,
    });
    return named;
  }
}
