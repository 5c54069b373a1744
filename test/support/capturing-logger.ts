import type { LoggerService } from '@nestjs/common';

export interface CapturedLog {
  readonly level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  readonly message: unknown;
  readonly context: string | undefined;
}

/** Keeps what the application logs, so tests can assert on events instead of printing them. */
export class CapturingLogger implements LoggerService {
  readonly entries: CapturedLog[] = [];

  log(message: unknown, ...rest: unknown[]): void {
    this.push('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.push('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.push('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.push('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.push('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.push('fatal', message, rest);
  }

  /** Structured entries whose `event` field is `event`. */
  events(event: string): Array<Record<string, unknown>> {
    return this.entries
      .map((entry) => entry.message)
      .filter(
        (message): message is Record<string, unknown> =>
          typeof message === 'object' &&
          message !== null &&
          (message as { event?: unknown }).event === event,
      );
  }

  private push(level: CapturedLog['level'], message: unknown, rest: unknown[]): void {
    const last = rest[rest.length - 1];
    this.entries.push({ level, message, context: typeof last === 'string' ? last : undefined });
  }
}
