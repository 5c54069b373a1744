import type { LoggerService } from '@nestjs/common';

/**
 * Counts what the library logs and drops it: the per-row log lines are built
 * (their cost is in the figures), but not written to a terminal. A file of its
 * own so that the CPU profile can tell its frames apart (profile-categories.ts).
 */
export class CountingLogger implements LoggerService {
  lines = 0;
  errors: unknown[] = [];
  log(): void {
    this.lines++;
  }
  warn(): void {
    this.lines++;
  }
  debug(): void {
    this.lines++;
  }
  verbose(): void {
    this.lines++;
  }
  error(message: unknown): void {
    this.lines++;
    if (this.errors.length < 5) this.errors.push(message);
  }
}
