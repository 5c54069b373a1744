import type { Client } from 'pg';
import { CHAOS_CHANNELS, CHAOS_WORKER } from './chaos-config';
import {
  byRowAndInstance,
  describeCall,
  describeWrite,
  lateSuccessOwners,
  loadCallHistory,
  OUTCOME_NOT_RECORDED,
  unitsOfWork,
  type AuditedWrite,
  type CallHistory,
  type LedgerCall,
} from './call-history';
import { invariantResult, type InvariantResult } from './invariant-result';

/**
 * The invariants that pair each provider call with its unit of work (see
 * `unitsOfWork` in call-history.ts): every one reads the ledger and the audit
 * itself, or takes a history already read.
 */

export interface DuplicateFigures {
  /** Rows with more than one successful provider call. */
  readonly rows: number;
  /** Successful calls besides the one that wrote Sent whose unit of work never committed. */
  readonly uncommitted: number;
  /** … and those whose unit of work committed only an outcome_not_recorded hold. */
  readonly held: number;
  /** … and those that answered only after their attempt had been written off (past the margin). */
  readonly tooLate: number;
}

const ms = (micros: number): number => Math.round(micros / 1000);

async function history(client: Client, given?: CallHistory): Promise<CallHistory> {
  return given ?? loadCallHistory(client);
}

function ownerOfWrites(
  history: CallHistory,
  units: Map<string, AuditedWrite | null>,
): Map<number, LedgerCall> {
  const calls = new Map(history.calls.map((c) => [c.callId, c]));
  const owners = new Map<number, LedgerCall>();
  for (const [callId, write] of units) {
    const call = calls.get(callId);
    if (write && call) owners.set(write.seq, call);
  }
  return owners;
}

/**
 * Every Sent write is the unit of work of a call of its own writer that
 * succeeded, or a late-success write after a success of its writer had
 * answered.
 */
export async function checkSentFromSuccess(
  client: Client,
  given?: CallHistory,
): Promise<InvariantResult> {
  const h = await history(client, given);
  const owners = ownerOfWrites(h, unitsOfWork(h));
  const late = lateSuccessOwners(h);
  const sent = h.writes.filter((w) => w.newStatus === 'Sent');
  const failures: string[] = [];
  for (const write of sent) {
    if (write.lateSuccess) {
      if (!late.has(write.seq)) {
        failures.push(
          `${write.notificationId}: late-success Sent written by ${write.writer} (audit #${write.seq}) before any success of its had answered`,
        );
      }
      continue;
    }
    const call = owners.get(write.seq);
    if (!call) {
      failures.push(
        `${write.notificationId}: Sent written by ${write.writer} (audit #${write.seq}) without a call of its own before it`,
      );
    } else if (call.outcome !== 'succeeded') {
      failures.push(
        `${write.notificationId}: Sent written for ${describeCall(call)}, which answered ${call.outcome ?? 'nothing'}`,
      );
    }
  }
  return invariantResult(
    'every Sent write belongs to a unit of work whose call succeeded',
    failures,
    `${sent.length} Sent writes (${late.size} of them late successes), each after a successful call of its writer`,
  );
}

/**
 * No success is recorded as a failure: the unit of work of a successful call
 * wrote Sent, committed nothing, or committed only an outcome_not_recorded
 * hold. A late answer the worker stopped waiting for shows up here.
 */
export async function checkNoSuccessRecordedAsFailure(
  client: Client,
  given?: CallHistory,
): Promise<InvariantResult> {
  const h = await history(client, given);
  const units = unitsOfWork(h);
  const failures: string[] = [];
  let successes = 0;
  for (const call of h.calls) {
    if (call.outcome !== 'succeeded') continue;
    successes++;
    const write = units.get(call.callId) ?? null;
    if (!write || write.newStatus === 'Sent' || write.errorCode === OUTCOME_NOT_RECORDED) continue;
    // Answered after its unit of work was written (past the settle margin): the worker could not
    // know, and wrote the attempt off; that is allowed only if it did not end the row for good.
    if (answeredAfter(call, write) && !write.terminal) continue;
    const late =
      call.answeredAt !== null && call.outcomeAt !== null
        ? `, answered ${ms(call.answeredAt - call.startedAt)} ms after it started`
        : '';
    failures.push(
      `${call.notificationId}: ${describeCall(call)} succeeded${late}, but its unit of work wrote ${describeWrite(write)}`,
    );
  }
  return invariantResult(
    'no success recorded as a failure',
    failures,
    `${successes} successful calls; each unit of work wrote Sent, a hold, or did not commit`,
  );
}

/**
 * A row with two or more successful calls: every one besides the call whose
 * unit of work (or late-success write) wrote Sent had a unit of work that did
 * not commit (a crash, a terminated backend, a lost lease between the call
 * and the COMMIT, a claim cleared by another call's late success) or that
 * committed only an outcome_not_recorded hold.
 */
export async function checkDuplicateSends(
  client: Client,
  given?: CallHistory,
): Promise<{ result: InvariantResult; figures: DuplicateFigures }> {
  const h = await history(client, given);
  const units = unitsOfWork(h);
  const recordedLate = new Set([...lateSuccessOwners(h).values()].map((c) => c.callId));
  const wroteSent = (call: LedgerCall): boolean =>
    units.get(call.callId)?.newStatus === 'Sent' || recordedLate.has(call.callId);
  const successes = new Map<string, LedgerCall[]>();
  for (const call of h.calls) {
    if (call.outcome !== 'succeeded') continue;
    const list = successes.get(call.notificationId);
    if (list) list.push(call);
    else successes.set(call.notificationId, [call]);
  }
  const failures: string[] = [];
  let rows = 0;
  let uncommitted = 0;
  let held = 0;
  let tooLate = 0;
  for (const [id, calls] of successes) {
    if (calls.length < 2) continue;
    rows++;
    const committing = calls.filter(wroteSent);
    if (committing.length !== 1) {
      failures.push(
        `${id}: ${calls.length} successful calls, ${committing.length} of them with a unit of work that wrote Sent`,
      );
    }
    for (const call of calls) {
      if (committing.includes(call)) continue;
      const write = units.get(call.callId) ?? null;
      if (!write) uncommitted++;
      else if (write.errorCode === OUTCOME_NOT_RECORDED) held++;
      else if (answeredAfter(call, write) && !write.terminal) tooLate++;
      else
        failures.push(
          `${id}: ${describeCall(call)} succeeded besides the one that wrote Sent, and its unit of work committed ${describeWrite(write)}`,
        );
    }
  }
  return {
    result: invariantResult(
      'a second successful call only where the first one’s unit of work did not commit',
      failures,
      `${rows} row(s) with >1 successful call; the other successes: ${uncommitted} never committed, ${held} committed only an ${OUTCOME_NOT_RECORDED} hold, ${tooLate} answered only after their attempt was written off`,
    ),
    figures: { rows, uncommitted, held, tooLate },
  };
}

/** An instance never starts a call for a row while its previous call for that row has not answered. */
export async function checkNoOverlappingCalls(
  client: Client,
  given?: CallHistory,
): Promise<InvariantResult> {
  const h = await history(client, given);
  const failures: string[] = [];
  for (const calls of byRowAndInstance(
    h.calls,
    (c) => c.instance,
    (c) => c.startedAt,
  ).values()) {
    // The earlier call that answered last, and when.
    // A call with no answer at all is still out for good: its instance (one generation of a
    // process) may not call for that row again.
    let latest: { call: LedgerCall; answeredAt: number } | null = null;
    for (const call of calls) {
      if (latest && call.startedAt < latest.answeredAt) {
        failures.push(
          Number.isFinite(latest.answeredAt)
            ? `${call.notificationId}: ${describeCall(call)} started ${ms(latest.answeredAt - call.startedAt)} ms before ${describeCall(latest.call)} answered`
            : `${call.notificationId}: ${describeCall(call)} started while ${describeCall(latest.call)} never answered`,
        );
      }
      const answeredAt = call.answeredAt ?? Number.POSITIVE_INFINITY;
      if (answeredAt > (latest?.answeredAt ?? 0)) latest = { call, answeredAt };
    }
  }
  return invariantResult(
    'an instance never calls for a row while its previous call for it is unanswered',
    failures,
    `${h.calls.length} calls, none started by an instance before its previous call for that row answered`,
  );
}

/** How much later than the worker's timer the ledger may record a call's start. */
const LEDGER_START_ALLOWANCE_MS = 100;

/**
 * The worker wrote the attempt off before the call answered (or the call never
 * answered: its instance died first), having waited out the timeout: it could
 * not have known the answer. How long past the timeout it waited is not judged:
 * the settle margin is cut to what the row's claim leaves (provider-caller.ts),
 * down to nothing for a row that waited in the queue, so a write-off anywhere
 * between the timeout and the whole margin is correct (the answer, if a
 * success, is then recorded by the late-success path: "every notification with
 * a successful call ends Sent"). That the full margin is awaited when the claim
 * leaves it is proved by retry-cycle.late-answers.spec.ts. A write-off before
 * the timeout with the answer still to come is a bug. Judged with the shortest
 * channel timeout, less an allowance for the ledger's `started` (two round
 * trips after the worker's timer started), so that a loaded machine cannot make
 * a correct write look early. An answer that came after every channel's
 * timeout and the whole margin was written off however late its write commits
 * (outcomes are group-committed: the decision comes before the write's commit).
 */
function answeredAfter(call: LedgerCall, write: AuditedWrite): boolean {
  const timeouts = CHAOS_CHANNELS.map((channel) => channel.timeoutMs);
  const waitedAtLeastMs = Math.min(...timeouts) - LEDGER_START_ALLOWANCE_MS;
  const pastEveryMarginMs = Math.max(...timeouts) + CHAOS_WORKER.settleMarginMs;
  // No answer at all (its instance died before it came) is later than any write.
  const answeredAt = call.answeredAt ?? Number.POSITIVE_INFINITY;
  const answeredPastMargin = ms(answeredAt - call.startedAt) >= pastEveryMarginMs;
  return (
    (write.at < answeredAt || answeredPastMargin) &&
    ms(write.at - call.startedAt) >= waitedAtLeastMs
  );
}
