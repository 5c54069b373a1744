import type { ProviderAdapter } from './provider-adapter';

/**
 * What the registry knows about a provider key: an adapter to call, an adapter
 * whose feature flag is off (its channels' rows wait), or no adapter at all (a
 * deployment mistake the worker reports at start).
 */
export type ProviderAdapterLookup =
  | { readonly kind: 'enabled'; readonly adapter: ProviderAdapter }
  | { readonly kind: 'disabled' }
  | { readonly kind: 'missing' };
