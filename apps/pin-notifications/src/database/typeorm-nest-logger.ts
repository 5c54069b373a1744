import { Logger as NestLogger } from '@nestjs/common';
import type { Logger as TypeOrmLogger } from 'typeorm';

/**
 * Routes TypeORM's messages into the app's JSON log. Query parameters are never
 * logged: they carry recipient addresses and message bodies. Individual queries
 * are not logged either (TypeORM hands every one of them to a custom logger).
 */
export class TypeOrmNestLogger implements TypeOrmLogger {
  private readonly logger = new NestLogger('TypeORM');

  logQuery(): void {
    // Deliberately silent: one line per query would be most of the log.
  }

  logQueryError(error: string | Error, query: string): void {
    // Warn, not error: the caller receives the error too and knows whether it matters.
    this.logger.warn({
      msg: 'query-failed',
      event: 'query-failed',
      error: typeof error === 'string' ? error : `${error.name}: ${error.message}`,
      query: compact(query),
    });
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn({
      msg: 'query-slow',
      event: 'query-slow',
      durationMs: time,
      query: compact(query),
    });
  }

  logSchemaBuild(message: string): void {
    this.logger.log({ msg: 'schema-build', event: 'schema-build', detail: message });
  }

  logMigration(message: string): void {
    this.logger.log({ msg: 'migration', event: 'migration', detail: message });
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    const entry = { msg: 'typeorm', event: 'typeorm', detail: String(message) };
    if (level === 'warn') this.logger.warn(entry);
    else this.logger.log(entry);
  }
}

function compact(query: string): string {
  return query.replace(/\s+/g, ' ').trim();
}
