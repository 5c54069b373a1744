import type { DynamicModule, Type } from '@nestjs/common';

/** What the ops CLI works with: the app's environment, and the modules a host adds (its adapters). */
export interface OpsSettings {
  readonly env: NodeJS.ProcessEnv;
  readonly imports?: ReadonlyArray<Type | DynamicModule>;
}

export const OPS_SETTINGS = Symbol('OPS_SETTINGS');
