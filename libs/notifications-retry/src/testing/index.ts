// Test helpers for provider adapters: `@pin/notifications-retry/testing`. Kept out of the
// main entry point so that production code never loads jest or a fake server.

export { sampleNotification } from './sample-notification';
export type {
  ProviderAdapterContractCapabilities,
  ProviderAdapterContractHarness,
  ProviderAdapterContractHarnessFactory,
  ProviderBehaviour,
  ProviderBehaviourOptions,
} from './provider-adapter-contract-harness';
export type { ProviderAdapterContractOptions } from './provider-adapter-contract-options';
export {
  PROVIDER_ADAPTER_CONTRACT_CHECKS,
  type ProviderAdapterContractCheck,
  type ProviderAdapterContractCheckName,
} from './provider-adapter-contract-checks';
export {
  checkProviderAdapterContract,
  applicableContractChecks,
  runContractCheck,
  type ContractViolation,
} from './check-provider-adapter-contract';
export { describeProviderAdapterContract } from './describe-provider-adapter-contract';
export {
  FakeWebhookServer,
  type RecordedWebhookRequest,
  type WebhookReply,
  type WebhookResponder,
} from './fake-webhook-server';
export {
  webhookContractHarness,
  type WebhookContractHarnessOptions,
} from './webhook-contract-harness';
