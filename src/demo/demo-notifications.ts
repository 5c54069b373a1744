import { createHash } from 'node:crypto';
import { NotificationStatus } from '../../libs/notifications-retry/src';
import { demoUuid } from './demo-uuid';

/** One `notifications` row. Address, subject and body are personal data, even when fake. */
export interface DemoNotification {
  readonly id: string;
  readonly tenantId: string | null;
  readonly channel: string;
  readonly recipientAddress: string;
  readonly subject: string | null;
  readonly body: string;
  readonly status: NotificationStatus;
  readonly attempts: number;
  readonly nextAttemptAt: Date | null;
  readonly scheduledAt: Date | null;
  readonly providerMessageId: string | null;
  readonly lastErrorCode: string | null;
  readonly lastErrorMessage: string | null;
  readonly sentAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

const MINUTE = 60_000;

// The demo provider's outcome is a hash of id and attempt, so the ids decide what the
// first cycle shows. This batch name gives, for e-mail, sent rows, retries, one
// non-retriable rejection and one row that uses up its last attempt.
const ID_BATCH = 'demo-batch-1';

// Null is an investor's own notification; the others belong to two client tenants.
const TENANTS = [null, demoUuid('tenant:northwind-capital'), demoUuid('tenant:harbor-wealth')];

const MESSAGES: ReadonlyArray<{ subject: string; body: string }> = [
  {
    subject: 'Your monthly statement is ready',
    body: 'Hi Alex, your statement for last month is ready in the Documents section.',
  },
  {
    subject: 'Dividend received',
    body: 'Hi Maria, a dividend of $42.17 from VTI was credited to your account.',
  },
  {
    subject: 'New sign-in to your account',
    body: 'Hi Sam, we noticed a sign-in from Chrome on macOS. Not you? Reset your password.',
  },
  {
    subject: 'Document awaiting your signature',
    body: 'Hi Priya, your advisory agreement is ready to sign.',
  },
  {
    subject: 'Withdrawal processed',
    body: 'Hi Jordan, your withdrawal of $1,250.00 is on its way to your bank account ending 4821.',
  },
  {
    subject: 'Portfolio rebalanced',
    body: 'Hi Chen, your portfolio was rebalanced to your target allocation.',
  },
  {
    subject: 'Quarterly report available',
    body: 'Hi Olivia, the Q3 performance report for your account is now available.',
  },
  {
    subject: 'Confirm your e-mail address',
    body: 'Hi Diego, please confirm this address to keep receiving trade confirmations.',
  },
];

/** Where a demo row stands: how the worker should see it when the demo starts. */
type RowPlan =
  | { kind: 'failed'; attempts: number; dueMinutesAgo: number; lastErrorCode: string }
  | { kind: 'scheduled'; minutesFromNow: number }
  | { kind: 'sent'; minutesAgo: number }
  | { kind: 'terminal'; attempts: number; lastErrorCode: string }
  | { kind: 'fresh' };

const failed = (attempts: number, dueMinutesAgo: number, lastErrorCode: string): RowPlan => ({
  kind: 'failed',
  attempts,
  dueMinutesAgo,
  lastErrorCode,
});
const scheduled = (minutesFromNow: number): RowPlan => ({ kind: 'scheduled', minutesFromNow });

/**
 * Forty notifications, all relative to `now`: due retries (a few one attempt
 * from the channel's max_attempts, one already at it), deferred rows whose
 * quiet hours are over and some still in the future, rows of the disabled `sms`
 * channel, and history the worker must leave alone (Sent, terminal Failed, and
 * a fresh Pending row without scheduled_at, which is the dispatcher's).
 */
export function buildDemoNotifications(now: Date): DemoNotification[] {
  const plans: Array<[channel: string, plans: RowPlan[]]> = [
    [
      'email', // demo-flaky, max_attempts 4
      [
        failed(1, 1, 'provider_unavailable'),
        failed(1, 2, 'provider_timeout'),
        failed(1, 3, 'provider_unavailable'),
        failed(2, 5, 'provider_unavailable'),
        failed(1, 8, 'provider_timeout'),
        failed(2, 13, 'provider_unavailable'),
        failed(1, 21, 'provider_unavailable'),
        failed(2, 34, 'provider_timeout'),
        failed(3, 4, 'provider_unavailable'),
        failed(3, 9, 'provider_timeout'),
        failed(4, 6, 'provider_unavailable'),
        scheduled(-60),
        scheduled(-20),
        scheduled(-2),
        scheduled(1.5),
        scheduled(120),
      ],
    ],
    [
      'in_app', // always delivers, max_attempts 3
      [
        failed(1, 2, 'inbox_write_timeout'),
        failed(1, 7, 'inbox_write_timeout'),
        failed(2, 12, 'inbox_write_timeout'),
        scheduled(-45),
        scheduled(-15),
        scheduled(-5),
        scheduled(-1),
        scheduled(5),
      ],
    ],
    [
      'push', // built-in stub, max_attempts 5
      [
        failed(1, 3, 'apns_unavailable'),
        failed(3, 10, 'fcm_unavailable'),
        failed(4, 25, 'apns_unavailable'),
        scheduled(-30),
        scheduled(-10),
        scheduled(-3),
        scheduled(10),
      ],
    ],
    [
      'sms', // disabled: these wait untouched
      [
        failed(1, 4, 'carrier_unavailable'),
        failed(2, 11, 'carrier_unavailable'),
        failed(1, 40, 'carrier_timeout'),
        scheduled(-25),
        scheduled(-6),
      ],
    ],
    [
      'email',
      [
        { kind: 'sent', minutesAgo: 50 },
        { kind: 'terminal', attempts: 4, lastErrorCode: 'recipient_rejected' },
      ],
    ],
    ['push', [{ kind: 'sent', minutesAgo: 35 }]],
    ['in_app', [{ kind: 'fresh' }]],
  ];

  const rows: DemoNotification[] = [];
  for (const [channel, channelPlans] of plans) {
    for (const plan of channelPlans) {
      const n = rows.length;
      rows.push(demoRow(n, channel, plan, now));
    }
  }
  return rows;
}

function demoRow(n: number, channel: string, plan: RowPlan, now: Date): DemoNotification {
  const at = (minutes: number): Date => new Date(now.getTime() + minutes * MINUTE);
  const id = demoUuid(`${ID_BATCH}/notification:${n}`);
  const message = MESSAGES[n % MESSAGES.length];
  const base = {
    id,
    tenantId: TENANTS[n % TENANTS.length],
    channel,
    recipientAddress: recipientFor(channel, n),
    subject: channel === 'email' ? message.subject : null,
    body: channel === 'email' ? message.body : `${message.subject}. ${message.body}`,
    providerMessageId: null,
    lastErrorCode: null,
    lastErrorMessage: null,
    sentAt: null,
    nextAttemptAt: null,
    scheduledAt: null,
    attempts: 0,
  };
  switch (plan.kind) {
    case 'failed':
      return {
        ...base,
        status: NotificationStatus.Failed,
        attempts: plan.attempts,
        nextAttemptAt: at(-plan.dueMinutesAgo),
        lastErrorCode: plan.lastErrorCode,
        lastErrorMessage: `previous attempt failed: ${plan.lastErrorCode}`,
        createdAt: at(-plan.dueMinutesAgo - 30 * plan.attempts),
        updatedAt: at(-plan.dueMinutesAgo - 1),
      };
    case 'scheduled':
      return {
        ...base,
        status: NotificationStatus.Pending,
        scheduledAt: at(plan.minutesFromNow),
        createdAt: at(Math.min(plan.minutesFromNow, 0) - 8 * 60),
        updatedAt: at(Math.min(plan.minutesFromNow, 0) - 8 * 60),
      };
    case 'sent':
      return {
        ...base,
        status: NotificationStatus.Sent,
        attempts: 1,
        providerMessageId: `${channel}-${id.slice(0, 8)}`,
        sentAt: at(-plan.minutesAgo),
        createdAt: at(-plan.minutesAgo - 1),
        updatedAt: at(-plan.minutesAgo),
      };
    case 'terminal':
      return {
        ...base,
        status: NotificationStatus.Failed,
        attempts: plan.attempts,
        lastErrorCode: plan.lastErrorCode,
        lastErrorMessage: `provider rejected the recipient: ${plan.lastErrorCode}`,
        createdAt: at(-6 * 60),
        updatedAt: at(-5 * 60),
      };
    case 'fresh':
      return { ...base, status: NotificationStatus.Pending, createdAt: now, updatedAt: now };
  }
}

/** Fake but plausible: example.com mail, 555-01xx phone numbers (reserved for fiction), hex device tokens. */
function recipientFor(channel: string, n: number): string {
  const user = 3 + ((n * 7) % 97);
  switch (channel) {
    case 'email':
      return `user${user}@example.com`;
    case 'sms':
      return `+121255501${String(user % 100).padStart(2, '0')}`;
    case 'push':
      return createHash('sha256').update(`device:${user}`).digest('hex');
    default:
      return `account:${demoUuid(`user:${user}`)}`;
  }
}
