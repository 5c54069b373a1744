import type { LoggerService } from '@nestjs/common';

/**
 * The library's warnings and errors during a CLI run, as JSON lines on stderr:
 * stdout stays the command's result alone, so `--json` output pipes into jq.
 */
export class StderrLogger implements LoggerService {
  constructor(private readonly write: (text: string) => void) {}

  log(): void {}

  warn(message: unknown, context?: string): void {
    this.line('warn', message, context);
  }

  error(message: unknown, ...rest: unknown[]): void {
    const context =
      typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    this.line('error', message, context);
  }

  private line(level: string, message: unknown, context: string | undefined): void {
    const fields =
      typeof message === 'object' && message !== null ? message : { msg: String(message) };
    this.write(`${JSON.stringify({ level, context, ...fields })}\n`);
  }
}
