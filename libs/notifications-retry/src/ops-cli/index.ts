// The ops CLI's commands for a host's nest-commander entry: `@pin/notifications-retry/ops-cli`.
// Kept out of the main entry point so that a host that never mounts them needs no nest-commander.

export { NotificationsRetryOpsModule } from './notifications-retry-ops.module';
export type { NotificationsRetryOpsOptions } from './notifications-retry-ops-options';
export type {
  NotificationsRetryOpsOverrides,
  OpsHostContext,
  OpsHostFactory,
  OpsHostModule,
} from './ops-host';
export {
  runNotificationsRetryOps,
  type RunNotificationsRetryOpsOptions,
} from './run-notifications-retry-ops';
export { OpsExitCode } from './ops-exit-code';
export { cliActor } from './cli-actor';
export { OpsArgumentError } from './ops-argument.error';
// The CLI's own readings of `--since` and `--limit`, for a host's other surfaces (an admin API) to agree with it.
export { parseSince, parsePositiveInteger } from './ops-arguments';
export { OpsDatabaseUnreachableError } from './ops-database-unreachable.error';
export { OpsHostModuleError } from './ops-host-module.error';
export { PROCESS_IO, type OpsIo } from './ops-io';
export { StderrLogger } from './stderr-logger';
