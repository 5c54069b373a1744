import { RandomSource } from '@pin/notifications-retry';

/** Always the same sample; 0.5 leaves backoff delays exactly as the formula gives them. */
export class FixedRandomSource extends RandomSource {
  constructor(public sample = 0.5) {
    super();
  }

  next(): number {
    return this.sample;
  }
}
