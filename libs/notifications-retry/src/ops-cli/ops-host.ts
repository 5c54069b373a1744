import type { DynamicModule, ForwardReference, Type } from '@nestjs/common';

/**
 * What the host's module must apply to its `NotificationsRetryModule.forRoot`
 * options (spread last) when the ops CLI opens it: no schedule, no relay, and
 * the drain and instance id the command asked for. The CLI checks the resolved
 * options once the module is open and refuses to go on otherwise.
 */
export interface NotificationsRetryOpsOverrides {
  readonly enabled: false;
  readonly drain: boolean;
  readonly instanceId: string;
  readonly outboxRelay: { readonly enabled: false };
}

/** What the ops CLI hands the host's module factory. */
export interface OpsHostContext {
  readonly retry: NotificationsRetryOpsOverrides;
  /** Where the host's own logs go during a CLI run: stdout is the command's result alone. */
  readonly stderr: (text: string) => void;
}

export type OpsHostModule = Type | DynamicModule | Promise<DynamicModule> | ForwardReference;

/**
 * Builds the host's module graph for the CLI: the same providers, adapters,
 * catalog and extensions its worker runs with, with the overrides applied,
 * opened as an application context (no HTTP). Called once, by the first
 * command that needs the database; it may read the environment and throw
 * `OpsArgumentError` for a configuration the CLI cannot work with.
 */
export type OpsHostFactory = (context: OpsHostContext) => OpsHostModule | Promise<OpsHostModule>;
