import type { Client } from 'pg';
import { loadCallHistory } from './call-history';
import type { SigtermRecord, UnexpectedExit } from './chaos-events';
import type { InvariantResult } from './invariant-result';
import { checkFencingOrder, checkLeaseOwnership } from './lease-invariants';
import { checkProcessExits } from './process-invariants';
import {
  checkDeliveredEndsSent,
  checkEveryRowFinal,
  checkNoCallAfterFinal,
  checkOneEventPerRow,
  checkTerminalJustified,
  checkTransitionsAllowed,
} from './row-invariants';
import {
  checkDuplicateSends,
  checkNoOverlappingCalls,
  checkNoSuccessRecordedAsFailure,
  checkSentFromSuccess,
  type DuplicateFigures,
} from './unit-of-work-invariants';

export type { InvariantResult } from './invariant-result';
export type { DuplicateFigures } from './unit-of-work-invariants';

export interface InvariantCheck {
  readonly results: InvariantResult[];
  readonly duplicates: DuplicateFigures;
  readonly cycles: number;
  readonly auditedWrites: number;
}

export interface InvariantContext {
  readonly seededRows: number;
  readonly timedOut: boolean;
  readonly channels: ReadonlyArray<{ readonly key: string; readonly maxAttempts: number }>;
  /** The codes of the provider's non-retriable answers. */
  readonly nonRetriableCodes: ReadonlySet<string>;
  readonly sigterms: readonly SigtermRecord[];
  readonly unexpectedExits: readonly UnexpectedExit[];
}

/**
 * The guarantees of DESIGN.md §7, checked against the database after the run:
 * the rows, the outbox, the audit trigger's record of every row write and
 * lease change, and the provider-call ledger. Each check is its own function
 * (row-, unit-of-work-, lease- and process-invariants.ts), tested on crafted
 * violations in test/chaos-invariants.spec.ts.
 */
export async function checkInvariants(
  client: Client,
  context: InvariantContext,
): Promise<InvariantCheck> {
  const history = await loadCallHistory(client);
  const duplicates = await checkDuplicateSends(client, history);
  const lease = await checkLeaseOwnership(client);
  const results = [
    await checkEveryRowFinal(client, context),
    await checkOneEventPerRow(client),
    await checkTransitionsAllowed(client),
    await checkTerminalJustified(client, context),
    await checkNoCallAfterFinal(client),
    await checkDeliveredEndsSent(client),
    await checkNoSuccessRecordedAsFailure(client, history),
    await checkSentFromSuccess(client, history),
    duplicates.result,
    await checkNoOverlappingCalls(client, history),
    lease.result,
    await checkFencingOrder(client),
    checkProcessExits(context),
  ];
  return {
    results,
    duplicates: duplicates.figures,
    cycles: lease.leases,
    auditedWrites: lease.auditedWrites,
  };
}
