/// <reference types="jest" />
// The reference makes this one file's dependency on jest's globals explicit: the
// production build type-checks the library without jest's types.
import { applicableContractChecks, runContractCheck } from './check-provider-adapter-contract';
import type { ProviderAdapterContractHarnessFactory } from './provider-adapter-contract-harness';
import {
  resolveContractOptions,
  type ProviderAdapterContractOptions,
} from './provider-adapter-contract-options';

// Harness start-up and close, on top of the checks' own limits.
const SETUP_ALLOWANCE_MS = 10_000;

/**
 * Declares a jest `describe` with one test per contract check the harness can
 * drive. Call it at the top level of a spec file.
 */
export function describeProviderAdapterContract(
  name: string,
  factory: ProviderAdapterContractHarnessFactory,
  options: ProviderAdapterContractOptions = {},
): void {
  const limits = resolveContractOptions(options);
  // The slowest check sends twice; its own time boxes must end before jest's does.
  const timeoutMs =
    2 * limits.callTimeoutMs + limits.abortAfterMs + limits.settleWithinMs + SETUP_ALLOWANCE_MS;

  describe(`${name} honours the ProviderAdapter contract`, () => {
    for (const check of applicableContractChecks(factory)) {
      it(
        `${check.title} [${check.name}]`,
        async () => {
          const violation = await runContractCheck(check, factory, options);
          expect(violation).toBeNull();
        },
        timeoutMs,
      );
    }
  });
}
