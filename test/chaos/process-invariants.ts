import type { SigtermRecord, UnexpectedExit } from './chaos-events';
import { invariantResult, type InvariantResult } from './invariant-result';

/** SIGTERM: exit code 0; no instance exits unless told to. */
export function checkProcessExits(context: {
  readonly sigterms: readonly SigtermRecord[];
  readonly unexpectedExits: readonly UnexpectedExit[];
}): InvariantResult {
  const failures = [
    ...context.sigterms
      .filter((s) => s.code !== 0 || s.signal !== null)
      .map(
        (s) =>
          `${s.instanceId} (${s.final ? 'final stop' : 'chaos SIGTERM'}) exited with code ${s.code} signal ${s.signal}`,
      ),
    ...context.unexpectedExits.map(
      (e) =>
        `${e.instanceId} exited on its own (code ${e.code}, signal ${e.signal})${e.lastError ? `: ${e.lastError}` : ''}`,
    ),
  ];
  const chaos = context.sigterms.filter((s) => !s.final);
  return invariantResult(
    'SIGTERM exits 0; no instance dies unasked',
    failures,
    `${chaos.length} SIGTERM(s) (${chaos.filter((s) => s.midCycle).length} mid-cycle) and ${context.sigterms.length - chaos.length} final stops, all exit 0`,
  );
}
