import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export interface MemorySample {
  readonly rssMb: number;
  readonly heapUsedMb: number;
  /** What V8 holds for its heap, used or not: RSS that a flat heap can still grow. */
  readonly heapTotalMb: number;
  /** Memory outside the JS heap that V8 knows of (Buffers: the driver's sockets and parsers). */
  readonly externalMb: number;
}

/** RSS and heap after two full collections, so garbage does not count as growth. */
export function sampleMemory(): MemorySample {
  gc();
  gc();
  const usage = process.memoryUsage();
  const mb = (bytes: number): number => bytes / 1024 / 1024;
  return {
    rssMb: mb(usage.rss),
    heapUsedMb: mb(usage.heapUsed),
    heapTotalMb: mb(usage.heapTotal),
    externalMb: mb(usage.external),
  };
}
