/** Uniform samples from [0, 1) for backoff jitter; injectable so tests get exact delays. */
export abstract class RandomSource {
  abstract next(): number;
}

export class MathRandomSource extends RandomSource {
  next(): number {
    return Math.random();
  }
}
