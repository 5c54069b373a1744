import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export interface MemorySample {
  readonly rssMb: number;
  readonly heapUsedMb: number;
}

/** RSS and heap after two full collections, so garbage does not count as growth. */
export function sampleMemory(): MemorySample {
  gc();
  gc();
  const usage = process.memoryUsage();
  return { rssMb: usage.rss / 1024 / 1024, heapUsedMb: usage.heapUsed / 1024 / 1024 };
}
