import type { ProviderAdapter } from '../providers/provider-adapter';

/** How the harness makes the provider behind the adapter answer the next send. */
export type ProviderBehaviour = 'success' | 'retriable' | 'non-retriable' | 'throttled' | 'hang';

export interface ProviderBehaviourOptions {
  /** For 'throttled': the wait the provider asks for. Whole seconds suit HTTP providers. */
  readonly retryAfterMs?: number;
}

/**
 * What the harness can make the provider do or observe. Only the checks a
 * harness can drive run; 'success' must always be possible.
 */
export interface ProviderAdapterContractCapabilities {
  /** `lastIdempotencyKey()` reports the key the provider received. */
  readonly idempotencyKey: boolean;
  /** 'retriable' and 'non-retriable' work. */
  readonly failures: boolean;
  /** 'throttled' works. */
  readonly throttling: boolean;
  /** 'hang' works: the provider accepts the request and never answers. */
  readonly hanging: boolean;
}

/**
 * One adapter wired to a provider the test controls: a local fake server, an
 * SDK's test mode, an in-memory fake. Each check gets a fresh harness.
 */
export interface ProviderAdapterContractHarness {
  readonly adapter: ProviderAdapter;
  respondWith(
    behaviour: ProviderBehaviour,
    options?: ProviderBehaviourOptions,
  ): void | Promise<void>;
  /** The idempotency key of the last request the provider received; undefined if none or unknown. */
  lastIdempotencyKey(): string | undefined | Promise<string | undefined>;
  /** Stops servers and releases a hanging request. */
  close?(): void | Promise<void>;
}

/**
 * Capabilities are static, so that `describeProviderAdapterContract` knows which
 * tests to declare before any harness exists.
 */
export interface ProviderAdapterContractHarnessFactory {
  readonly capabilities: ProviderAdapterContractCapabilities;
  create(): ProviderAdapterContractHarness | Promise<ProviderAdapterContractHarness>;
}
