import { randomUUID } from 'node:crypto';
import type { OutgoingNotification } from '../providers/provider-adapter';

/**
 * A notification for adapter tests. Its personal data is fake and looks it: the
 * address is on the reserved `.invalid` domain, so nothing can ever be delivered
 * to it, and the texts are recognisable in a provider's echo. A new id per call.
 */
export function sampleNotification(
  overrides: Partial<OutgoingNotification> = {},
): OutgoingNotification {
  return {
    id: randomUUID(),
    tenantId: 'tenant-contract-test',
    channel: 'email',
    recipientAddress: 'fake.recipient@contract-test.invalid',
    subject: 'Fake subject of a contract test',
    body: 'Hello Fake Person, this is a contract-test notification; nobody receives it.',
    attempts: 0,
    ...overrides,
  };
}
