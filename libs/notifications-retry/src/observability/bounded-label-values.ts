/** The label value every key beyond the limit is reported under. */
export const OVERFLOW_LABEL_VALUE = '_other';

/**
 * Keeps a label's cardinality bounded: the first `limit` distinct keys seen by
 * this process keep their own label value for as long as it runs; any later
 * key is reported as `_other`. A key never changes label once it has one, so a
 * series is never split or renamed while the process lives. With a handful of
 * channels (the common case) every channel has its own series; with a
 * thousand, at most `limit` do and the rest are summed into `_other`.
 */
export class BoundedLabelValues {
  private readonly own = new Set<string>();

  constructor(private readonly limit: number) {}

  of(key: string): string {
    if (this.own.has(key)) return key;
    if (this.own.size >= this.limit) return OVERFLOW_LABEL_VALUE;
    this.own.add(key);
    return key;
  }
}
