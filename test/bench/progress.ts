import { performance } from 'node:perf_hooks';

const started = performance.now();

/** Progress goes to stderr, so stdout carries nothing but the final markdown. */
export function progress(message: string): void {
  const seconds = ((performance.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[bench ${seconds}s] ${message}\n`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resident set size in MB, for progress lines. */
export function rssMb(): string {
  return `${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MB`;
}
