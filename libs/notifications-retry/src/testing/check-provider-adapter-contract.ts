import {
  PROVIDER_ADAPTER_CONTRACT_CHECKS,
  type ProviderAdapterContractCheck,
  type ProviderAdapterContractCheckName,
} from './provider-adapter-contract-checks';
import type { ProviderAdapterContractHarnessFactory } from './provider-adapter-contract-harness';
import {
  resolveContractOptions,
  type ProviderAdapterContractOptions,
} from './provider-adapter-contract-options';

export interface ContractViolation {
  readonly check: ProviderAdapterContractCheckName;
  readonly message: string;
}

/** The checks this harness can drive, in the order they run. */
export function applicableContractChecks(
  factory: ProviderAdapterContractHarnessFactory,
): ProviderAdapterContractCheck[] {
  return PROVIDER_ADAPTER_CONTRACT_CHECKS.filter(
    (check) => check.requires === null || factory.capabilities[check.requires],
  );
}

/**
 * Runs one check on a fresh harness. A harness that fails to start or close
 * rejects: that is a broken test setup, not a contract violation.
 */
export async function runContractCheck(
  check: ProviderAdapterContractCheck,
  factory: ProviderAdapterContractHarnessFactory,
  options: ProviderAdapterContractOptions = {},
): Promise<ContractViolation | null> {
  const harness = await factory.create();
  try {
    const message = await check.run(harness, resolveContractOptions(options));
    return message === null ? null : { check: check.name, message };
  } finally {
    await harness.close?.();
  }
}

/**
 * Runs every check the harness's capabilities allow, one after the other, and
 * returns the violations (empty when the adapter honours the contract).
 */
export async function checkProviderAdapterContract(
  factory: ProviderAdapterContractHarnessFactory,
  options: ProviderAdapterContractOptions = {},
): Promise<ContractViolation[]> {
  const violations: ContractViolation[] = [];
  for (const check of applicableContractChecks(factory)) {
    const violation = await runContractCheck(check, factory, options);
    if (violation !== null) violations.push(violation);
  }
  return violations;
}
