import {
  describeProviderAdapterContract,
  webhookContractHarness,
} from '@pin/notifications-retry/testing';
import { AcmeEmailAdapter, AcmeEmailSettings } from './acme-email.adapter';

// Against a real HTTP server on 127.0.0.1: success, idempotency key, failures, throttling,
// abort, and no personal data in the errors it throws.
describeProviderAdapterContract(
  'AcmeEmailAdapter',
  webhookContractHarness((url) => new AcmeEmailAdapter(new AcmeEmailSettings(url, 'test-token'))),
);
