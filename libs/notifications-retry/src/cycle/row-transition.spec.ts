import type { ChannelConfig } from '../channels/channel-config';
import { NotificationStatus } from '../vocabulary/notification-status';
import type { AttemptOutcome } from '../vocabulary/attempt-outcome';
import {
  decideTransition,
  isAllowedTransition,
  MAX_RETRY_AFTER_MS,
  UNRECORDED_OUTCOME_CODE,
  unrecordedOutcomeTransition,
  type ClaimedRowState,
} from './row-transition';

const NOW = new Date('2030-06-01T12:00:00.000Z');
const at = (offsetMs: number): Date => new Date(NOW.getTime() + offsetMs);

/** base 1 s, ×2 per attempt, capped at 1 h; 5 attempts at most. */
const exponentialChannel: ChannelConfig = {
  key: 'email',
  isEnabled: true,
  providerKey: 'sendgrid',
  maxAttempts: 5,
  backoff: { kind: 'Exponential', baseMs: 1_000, maxMs: 3_600_000, multiplier: 2 },
  timeoutMs: 10_000,
  rateLimitPerSec: null,
  maxConcurrency: null,
};

const fixedChannel: ChannelConfig = {
  ...exponentialChannel,
  key: 'sms',
  maxAttempts: 3,
  backoff: { kind: 'Fixed', baseMs: 30_000 },
};

function failedRow(attempts: number): ClaimedRowState {
  return {
    status: NotificationStatus.Failed,
    attempts,
    nextAttemptAt: at(-60_000),
    scheduledAt: null,
  };
}

function pendingRow(attempts = 0): ClaimedRowState {
  return {
    status: NotificationStatus.Pending,
    attempts,
    nextAttemptAt: null,
    scheduledAt: at(-5_000),
  };
}

const retriable: AttemptOutcome = {
  kind: 'retriable',
  errorCode: 'provider_5xx',
  errorMessage: 'HTTP 503',
};
const nonRetriable: AttemptOutcome = {
  kind: 'non-retriable',
  errorCode: 'invalid_address',
  errorMessage: 'mailbox does not exist',
};

describe('decideTransition', () => {
  describe('sent', () => {
    const sent: AttemptOutcome = { kind: 'sent', providerMessageId: 'msg-123' };

    it('Failed → Sent: attempts + 1, provider id, sent_at = now, event Sent', () => {
      const transition = decideTransition(failedRow(2), exponentialChannel, sent, NOW);
      expect(transition.result).toBe('sent');
      expect(transition.status).toBe(NotificationStatus.Sent);
      expect(transition.attempts).toBe(3);
      expect(transition.providerMessageId).toBe('msg-123');
      expect(transition.sentAt).toEqual(NOW);
      expect(transition.nextAttemptAt).toBeNull();
      expect(transition.lastErrorCode).toBeNull();
      expect(transition.lastErrorMessage).toBeNull();
      expect(transition.event).toBe('Sent');
    });

    it('Pending → Sent: first attempt counted', () => {
      const transition = decideTransition(pendingRow(), fixedChannel, sent, NOW);
      expect(transition.result).toBe('sent');
      expect(transition.status).toBe(NotificationStatus.Sent);
      expect(transition.attempts).toBe(1);
      expect(transition.providerMessageId).toBe('msg-123');
      expect(transition.sentAt).toEqual(NOW);
      expect(transition.event).toBe('Sent');
    });

    it('is Sent even on the last allowed attempt', () => {
      const transition = decideTransition(failedRow(4), exponentialChannel, sent, NOW);
      expect(transition.status).toBe(NotificationStatus.Sent);
      expect(transition.attempts).toBe(5);
      expect(transition.event).toBe('Sent');
    });
  });

  describe('retriable failure below max_attempts', () => {
    it.each([
      // row attempts → new attempts n; next = now + 1000 × 2^(n − 1)
      [0, 1, 1_000],
      [1, 2, 2_000],
      [2, 3, 4_000],
      [3, 4, 8_000],
    ])(
      'Failed row with %p attempts → Failed, attempts %p, next_attempt_at = now + %p ms, no event',
      (attempts, expectedAttempts, delayMs) => {
        const transition = decideTransition(
          failedRow(attempts),
          exponentialChannel,
          retriable,
          NOW,
        );
        expect(transition.result).toBe('retried');
        expect(transition.status).toBe(NotificationStatus.Failed);
        expect(transition.attempts).toBe(expectedAttempts);
        expect(transition.nextAttemptAt).toEqual(at(delayMs));
        expect(transition.lastErrorCode).toBe('provider_5xx');
        expect(transition.lastErrorMessage).toBe('HTTP 503');
        expect(transition.providerMessageId).toBeNull();
        expect(transition.sentAt).toBeNull();
        expect(transition.event).toBeNull();
      },
    );

    it('uses the Fixed base delay on a Fixed channel', () => {
      const transition = decideTransition(failedRow(1), fixedChannel, retriable, NOW);
      expect(transition.attempts).toBe(2);
      expect(transition.nextAttemptAt).toEqual(at(30_000));
      expect(transition.event).toBeNull();
    });

    it('Pending → Failed with a retry scheduled after the first attempt', () => {
      const transition = decideTransition(pendingRow(), exponentialChannel, retriable, NOW);
      expect(transition.result).toBe('retried');
      expect(transition.status).toBe(NotificationStatus.Failed);
      expect(transition.attempts).toBe(1);
      expect(transition.nextAttemptAt).toEqual(at(1_000));
      expect(transition.event).toBeNull();
    });

    it('caps the delay at backoff_max_ms', () => {
      const channel: ChannelConfig = {
        ...exponentialChannel,
        maxAttempts: 100,
        backoff: { kind: 'Exponential', baseMs: 60_000, maxMs: 600_000, multiplier: 3 },
      };
      // 60 000 × 3^(10 − 1) is far above 600 000
      const transition = decideTransition(failedRow(9), channel, retriable, NOW);
      expect(transition.attempts).toBe(10);
      expect(transition.nextAttemptAt).toEqual(at(600_000));
    });

    it('computes from the `now` it is given and does not mutate its inputs', () => {
      const row = failedRow(1);
      const rowCopy = { ...row, nextAttemptAt: new Date(row.nextAttemptAt!.getTime()) };
      const now = new Date(NOW.getTime());
      decideTransition(row, exponentialChannel, retriable, now);
      expect(now.getTime()).toBe(NOW.getTime());
      expect(row).toEqual(rowCopy);
    });
  });

  describe('retriable failure reaching max_attempts', () => {
    it('Failed row on its last attempt → terminal: next_attempt_at null, event Failed', () => {
      const transition = decideTransition(failedRow(4), exponentialChannel, retriable, NOW);
      expect(transition.result).toBe('terminal');
      expect(transition.status).toBe(NotificationStatus.Failed);
      expect(transition.attempts).toBe(5);
      expect(transition.nextAttemptAt).toBeNull();
      expect(transition.lastErrorCode).toBe('provider_5xx');
      expect(transition.lastErrorMessage).toBe('HTTP 503');
      expect(transition.event).toBe('Failed');
    });

    it('Pending row on a channel with max_attempts 1 → terminal after its only attempt', () => {
      const channel: ChannelConfig = { ...fixedChannel, maxAttempts: 1 };
      const transition = decideTransition(pendingRow(), channel, retriable, NOW);
      expect(transition.result).toBe('terminal');
      expect(transition.status).toBe(NotificationStatus.Failed);
      expect(transition.attempts).toBe(1);
      expect(transition.nextAttemptAt).toBeNull();
      expect(transition.event).toBe('Failed');
    });

    it('is not terminal one attempt earlier', () => {
      const transition = decideTransition(failedRow(3), exponentialChannel, retriable, NOW);
      expect(transition.result).toBe('retried');
      expect(transition.nextAttemptAt).not.toBeNull();
    });

    it('is not terminal for a call still unanswered after the settle margin: deferred, attempt not counted', () => {
      const unsettled: AttemptOutcome = {
        kind: 'retriable',
        errorCode: 'provider_timeout',
        errorMessage: 'no answer within the timeout and the settle margin',
        unsettled: true,
      };
      const transition = decideTransition(failedRow(4), exponentialChannel, unsettled, NOW);
      expect(transition).toMatchObject({
        result: 'deferred',
        status: NotificationStatus.Failed,
        attempts: 4,
        lastErrorCode: 'provider_timeout',
        event: null,
      });
      // Retried after the backoff of the attempt it would have been (the 5th: 16 s).
      expect(transition.nextAttemptAt).toEqual(at(16_000));
      // Below the last attempt it counts like any timeout.
      expect(decideTransition(failedRow(2), exponentialChannel, unsettled, NOW).result).toBe(
        'retried',
      );
    });
  });

  describe('non-retriable failure', () => {
    it.each([
      ['Failed', failedRow(1), 2],
      ['Pending', pendingRow(), 1],
    ])(
      '%s row → terminal Failed at once, attempt counted, event Failed',
      (_label, row, expectedAttempts) => {
        const transition = decideTransition(row, exponentialChannel, nonRetriable, NOW);
        expect(transition.result).toBe('terminal');
        expect(transition.status).toBe(NotificationStatus.Failed);
        expect(transition.attempts).toBe(expectedAttempts);
        expect(transition.attempts).toBeLessThan(exponentialChannel.maxAttempts);
        expect(transition.nextAttemptAt).toBeNull();
        expect(transition.lastErrorCode).toBe('invalid_address');
        expect(transition.lastErrorMessage).toBe('mailbox does not exist');
        expect(transition.providerMessageId).toBeNull();
        expect(transition.sentAt).toBeNull();
        expect(transition.event).toBe('Failed');
      },
    );
  });

  describe('exhausted (max_attempts was lowered)', () => {
    it('Failed row → terminal without adding an attempt', () => {
      const transition = decideTransition(failedRow(7), fixedChannel, { kind: 'exhausted' }, NOW);
      expect(transition.result).toBe('terminal');
      expect(transition.status).toBe(NotificationStatus.Failed);
      expect(transition.attempts).toBe(7);
      expect(transition.nextAttemptAt).toBeNull();
      expect(transition.lastErrorCode).toBe('max_attempts_exhausted');
      expect(transition.lastErrorMessage).toBe('attempts already reached the channel maximum');
      expect(transition.event).toBe('Failed');
    });

    it('Pending row → terminal Failed without adding an attempt', () => {
      const transition = decideTransition(pendingRow(3), fixedChannel, { kind: 'exhausted' }, NOW);
      expect(transition.status).toBe(NotificationStatus.Failed);
      expect(transition.attempts).toBe(3);
      expect(transition.nextAttemptAt).toBeNull();
      expect(transition.event).toBe('Failed');
    });
  });

  describe('throttled (the attempt does not count)', () => {
    const throttled = (retryAfterMs: number | null): AttemptOutcome => ({
      kind: 'throttled',
      retryAfterMs,
      errorCode: 'provider_throttled',
      errorMessage: 'HTTP 429',
    });

    it('Failed row: stays Failed, attempts unchanged, next_attempt_at moved to now + Retry-After', () => {
      const row = failedRow(2);
      const transition = decideTransition(row, exponentialChannel, throttled(120_000), NOW);
      expect(transition.result).toBe('deferred');
      expect(transition.status).toBe(NotificationStatus.Failed);
      expect(transition.attempts).toBe(2);
      expect(transition.nextAttemptAt).not.toBeNull();
      // exactly now + Retry-After: not earlier (the provider refuses) and not later (a row parked too long)
      expect(transition.nextAttemptAt!.getTime()).toBe(NOW.getTime() + 120_000);
      expect(transition.scheduledAt).toBe(row.scheduledAt);
      expect(transition.lastErrorCode).toBe('provider_throttled');
      expect(transition.lastErrorMessage).toBe('HTTP 429');
      expect(transition.providerMessageId).toBeNull();
      expect(transition.sentAt).toBeNull();
      expect(transition.event).toBeNull();
    });

    it('Pending row: stays Pending, attempts unchanged, scheduled_at moved to now + Retry-After', () => {
      const row = pendingRow();
      const transition = decideTransition(row, exponentialChannel, throttled(45_000), NOW);
      expect(transition.result).toBe('deferred');
      expect(transition.status).toBe(NotificationStatus.Pending);
      expect(transition.attempts).toBe(0);
      expect(transition.scheduledAt).not.toBeNull();
      expect(transition.scheduledAt!.getTime()).toBe(NOW.getTime() + 45_000);
      // a Pending row is due through scheduled_at; next_attempt_at stays as it was
      expect(transition.nextAttemptAt).toBeNull();
      expect(transition.event).toBeNull();
    });

    it('does not burn the last attempt: a throttle on the last attempt is not terminal', () => {
      const transition = decideTransition(failedRow(4), exponentialChannel, throttled(1_000), NOW);
      expect(transition.result).toBe('deferred');
      expect(transition.attempts).toBe(4);
      expect(transition.nextAttemptAt).not.toBeNull();
      expect(transition.event).toBeNull();
    });

    it('a Retry-After longer than the backoff is honoured', () => {
      // backoff for the next attempt would be 1000 × 2^(3−1) = 4000
      const transition = decideTransition(
        failedRow(2),
        exponentialChannel,
        throttled(7_200_000),
        NOW,
      );
      expect(transition.nextAttemptAt!.getTime()).toBe(NOW.getTime() + 7_200_000);
    });

    it('without Retry-After still moves the row strictly later, within the channel cap', () => {
      const transition = decideTransition(failedRow(1), fixedChannel, throttled(null), NOW);
      expect(transition.status).toBe(NotificationStatus.Failed);
      expect(transition.attempts).toBe(1);
      expect(transition.nextAttemptAt!.getTime()).toBeGreaterThan(NOW.getTime());
      expect(transition.nextAttemptAt!.getTime()).toBeLessThanOrEqual(NOW.getTime() + 30_000);
    });

    it('a Retry-After of 0 falls back to the backoff: the row is not retried at once', () => {
      const transition = decideTransition(failedRow(1), fixedChannel, throttled(0), NOW);
      expect(transition.nextAttemptAt!.getTime()).toBe(NOW.getTime() + 30_000);
    });

    it('a negative Retry-After never moves the row into the past', () => {
      const transition = decideTransition(failedRow(1), fixedChannel, throttled(-5_000), NOW);
      expect(transition.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(NOW.getTime());
    });

    // An adapter that ran Number() on an HTTP-date Retry-After header passes NaN; the row must
    // still get a valid next_attempt_at (the backoff), or its UPDATE would fail.
    it('a NaN Retry-After still yields a valid date', () => {
      const transition = decideTransition(failedRow(1), fixedChannel, throttled(NaN), NOW);
      expect(Number.isNaN(transition.nextAttemptAt!.getTime())).toBe(false);
      expect(transition.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(NOW.getTime());
    });

    it('caps a Retry-After beyond a day at a day, so a provider cannot park rows for months', () => {
      const year = 365 * 24 * 3_600_000;
      const transition = decideTransition(failedRow(1), fixedChannel, throttled(year), NOW);
      expect(transition.nextAttemptAt!.getTime()).toBe(NOW.getTime() + MAX_RETRY_AFTER_MS);
      expect(MAX_RETRY_AFTER_MS).toBe(24 * 3_600_000);
    });

    it.each([
      ['just under the cap: honoured as is', MAX_RETRY_AFTER_MS - 1, MAX_RETRY_AFTER_MS - 1],
      ['exactly the cap: honoured', MAX_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS],
      ['just over the cap: capped', MAX_RETRY_AFTER_MS + 1, MAX_RETRY_AFTER_MS],
    ])('Retry-After %s', (_label, retryAfterMs, expectedDelayMs) => {
      const failed = decideTransition(failedRow(1), fixedChannel, throttled(retryAfterMs), NOW);
      expect(failed.nextAttemptAt!.getTime()).toBe(NOW.getTime() + expectedDelayMs);
      const pending = decideTransition(pendingRow(), fixedChannel, throttled(retryAfterMs), NOW);
      expect(pending.scheduledAt!.getTime()).toBe(NOW.getTime() + expectedDelayMs);
    });
  });

  describe('interrupted (the attempt does not count)', () => {
    const interrupted: AttemptOutcome = { kind: 'interrupted', errorCode: 'worker_interrupted' };

    it('Failed row: stays Failed with attempts unchanged and a later next_attempt_at, no event', () => {
      const transition = decideTransition(failedRow(3), exponentialChannel, interrupted, NOW);
      expect(transition.result).toBe('deferred');
      expect(transition.status).toBe(NotificationStatus.Failed);
      expect(transition.attempts).toBe(3);
      expect(transition.nextAttemptAt!.getTime()).toBeGreaterThan(NOW.getTime());
      expect(transition.lastErrorCode).toBe('worker_interrupted');
      expect(transition.lastErrorMessage).toBeNull();
      expect(transition.event).toBeNull();
    });

    it('Pending row: stays Pending with attempts unchanged and a later scheduled_at', () => {
      const transition = decideTransition(pendingRow(), exponentialChannel, interrupted, NOW);
      expect(transition.status).toBe(NotificationStatus.Pending);
      expect(transition.attempts).toBe(0);
      expect(transition.scheduledAt!.getTime()).toBeGreaterThan(NOW.getTime());
      expect(transition.nextAttemptAt).toBeNull();
      expect(transition.event).toBeNull();
    });

    it('is not terminal on the last attempt', () => {
      const transition = decideTransition(failedRow(4), exponentialChannel, interrupted, NOW);
      expect(transition.nextAttemptAt).not.toBeNull();
      expect(transition.attempts).toBe(4);
    });
  });

  it('refuses a Sent row', () => {
    const row: ClaimedRowState = {
      status: NotificationStatus.Sent,
      attempts: 1,
      nextAttemptAt: null,
      scheduledAt: null,
    };
    for (const outcome of [retriable, nonRetriable, { kind: 'exhausted' } as const]) {
      expect(() => decideTransition(row, exponentialChannel, outcome, NOW)).toThrow(/Sent/);
    }
  });

  it('only ever produces transitions allowed by INV-NTF-5, with an event only when final', () => {
    const outcomes: AttemptOutcome[] = [
      { kind: 'sent', providerMessageId: 'p-1' },
      retriable,
      nonRetriable,
      {
        kind: 'throttled',
        retryAfterMs: 1_000,
        errorCode: 'provider_throttled',
        errorMessage: '429',
      },
      {
        kind: 'throttled',
        retryAfterMs: null,
        errorCode: 'provider_throttled',
        errorMessage: '429',
      },
      { kind: 'interrupted', errorCode: 'worker_interrupted' },
      { kind: 'exhausted' },
    ];
    const rows = [pendingRow(), pendingRow(4), failedRow(1), failedRow(4), failedRow(9)];
    for (const row of rows) {
      for (const outcome of outcomes) {
        const transition = decideTransition(row, exponentialChannel, outcome, NOW);
        expect(isAllowedTransition(row.status, transition.status)).toBe(true);
        const final =
          transition.status === NotificationStatus.Sent ||
          (transition.status === NotificationStatus.Failed && transition.nextAttemptAt === null);
        expect(transition.event !== null).toBe(final);
        if (transition.nextAttemptAt)
          expect(Number.isNaN(transition.nextAttemptAt.getTime())).toBe(false);
      }
    }
  });
});

describe('isAllowedTransition (INV-NTF-5)', () => {
  const { Pending, Sent, Failed } = NotificationStatus;

  it.each([
    [Failed, Sent],
    [Failed, Failed],
    [Pending, Sent],
    [Pending, Failed],
  ])('allows %s → %s', (from, to) => {
    expect(isAllowedTransition(from, to)).toBe(true);
  });

  it('allows Pending → Pending (a deferred row that stays as it was)', () => {
    expect(isAllowedTransition(Pending, Pending)).toBe(true);
  });

  it.each([
    [Sent, Sent],
    [Sent, Failed],
    [Sent, Pending],
    [Failed, Pending],
  ])('forbids %s → %s', (from, to) => {
    expect(isAllowedTransition(from, to)).toBe(false);
  });
});

describe('unrecordedOutcomeTransition (the provider was called, the outcome could not be committed)', () => {
  it('stores the code the runbook names', () => {
    // docs/runbooks/terminal-failures.md lists it; operators query last_error_code for it.
    expect(UNRECORDED_OUTCOME_CODE).toBe('outcome_not_recorded');
  });

  it('counts a lost Sent as an attempt: the Pending row becomes Failed, due after backoff, no event', () => {
    const row = pendingRow();
    const lost = decideTransition(
      row,
      exponentialChannel,
      { kind: 'sent', providerMessageId: 'p-1' },
      NOW,
    );
    const held = unrecordedOutcomeTransition(row, exponentialChannel, lost, NOW);
    expect(held).toEqual({
      result: 'retried',
      status: NotificationStatus.Failed,
      attempts: 1,
      nextAttemptAt: at(1_000),
      scheduledAt: row.scheduledAt,
      providerMessageId: null,
      sentAt: null,
      lastErrorCode: UNRECORDED_OUTCOME_CODE,
      lastErrorMessage: 'the provider was called but the outcome could not be recorded',
      event: null,
    });
    expect(isAllowedTransition(row.status, held.status)).toBe(true);
  });

  it('keeps the attempts a lost terminal outcome would have written, with no event and a due time, so the next cycle exhausts the row', () => {
    const row = failedRow(4);
    const lost = decideTransition(row, exponentialChannel, retriable, NOW);
    expect(lost.result).toBe('terminal');
    const held = unrecordedOutcomeTransition(row, exponentialChannel, lost, NOW);
    expect(held).toMatchObject({
      status: 'Failed',
      attempts: 5,
      nextAttemptAt: at(16_000),
      event: null,
    });
  });

  it('never lets a lost success use up the last attempt: the delivered row stays open, to be sent again and recorded', () => {
    const row = failedRow(4);
    const lost = decideTransition(
      row,
      exponentialChannel,
      { kind: 'sent', providerMessageId: 'p-1' },
      NOW,
    );
    expect(lost.attempts).toBe(5);
    const held = unrecordedOutcomeTransition(row, exponentialChannel, lost, NOW);
    expect(held).toMatchObject({ result: 'deferred', status: 'Failed', attempts: 4, event: null });
    expect(held.nextAttemptAt).toEqual(at(8_000));
  });

  it('counts a lost non-retriable answer as the one call it was: the row is asked again, not exhausted', () => {
    const row = failedRow(1);
    const lost = decideTransition(row, exponentialChannel, nonRetriable, NOW);
    expect(lost).toMatchObject({ result: 'terminal', attempts: 2 });
    const held = unrecordedOutcomeTransition(row, exponentialChannel, lost, NOW);
    expect(held).toMatchObject({
      status: 'Failed',
      attempts: 2,
      nextAttemptAt: at(2_000),
      event: null,
    });
  });

  it('leaves status and attempts alone when the lost attempt did not count (throttled), moving only the due time', () => {
    const row = pendingRow();
    const lost = decideTransition(
      row,
      fixedChannel,
      { kind: 'throttled', retryAfterMs: 5_000, errorCode: 'throttled', errorMessage: '' },
      NOW,
    );
    const held = unrecordedOutcomeTransition(row, fixedChannel, lost, NOW);
    expect(held).toMatchObject({
      result: 'deferred',
      status: 'Pending',
      attempts: 0,
      nextAttemptAt: null,
      scheduledAt: at(30_000),
      event: null,
    });
  });
});
