/** One invariant of the chaos run: PASS with a summary, or FAIL with the first violations. */
export interface InvariantResult {
  readonly name: string;
  readonly passed: boolean;
  readonly detail: string;
  /** How many violations were found (0 when it passed). */
  readonly violations: number;
}

const SAMPLE = 5;

export function invariantResult(
  name: string,
  failures: readonly string[],
  ok: string,
): InvariantResult {
  return failures.length === 0
    ? { name, passed: true, detail: ok, violations: 0 }
    : {
        name,
        passed: false,
        violations: failures.length,
        detail: `${failures.length} violation(s): ${failures.slice(0, SAMPLE).join('; ')}${failures.length > SAMPLE ? '; …' : ''}`,
      };
}
