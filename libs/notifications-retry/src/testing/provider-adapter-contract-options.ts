/** Time limits of the contract checks. */
export interface ProviderAdapterContractOptions {
  /** How long the 'hang' check lets the call run before aborting its signal. Default 100. */
  readonly abortAfterMs?: number;
  /** How soon after the abort the adapter must settle. Default 1 000. */
  readonly settleWithinMs?: number;
  /** Any other call that takes longer is a violation (instead of a stuck test). Default 5 000. */
  readonly callTimeoutMs?: number;
  /** The wait the throttling check asks the provider to announce. Default 30 000. */
  readonly retryAfterMs?: number;
}

export type ResolvedContractOptions = Required<ProviderAdapterContractOptions>;

export function resolveContractOptions(
  options: ProviderAdapterContractOptions = {},
): ResolvedContractOptions {
  return {
    abortAfterMs: options.abortAfterMs ?? 100,
    settleWithinMs: options.settleWithinMs ?? 1_000,
    callTimeoutMs: options.callTimeoutMs ?? 5_000,
    retryAfterMs: options.retryAfterMs ?? 30_000,
  };
}
