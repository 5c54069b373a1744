import type { DynamicModule, Type } from '@nestjs/common';
import {
  cliActor,
  NotificationsRetryOpsModule,
  runNotificationsRetryOps,
  type OpsExitCode,
  type OpsIo,
} from '@pin/notifications-retry/ops-cli';
import { pinOpsHost } from './pin-ops-host';

export interface PinOpsSettings {
  /** Where the configuration is read from (`process.env` for `npm run ops`). */
  readonly env: NodeJS.ProcessEnv;
  /** Modules imported next to AppModule (a team's adapters), as `bootstrapHost` takes them. */
  readonly imports?: ReadonlyArray<Type | DynamicModule>;
  /** Default the process's stdout and stderr. */
  readonly io?: OpsIo;
}

/** One `npm run ops -- <argv>` run over the Pin app's own module graph; returns the exit code. */
export function runPinOps(argv: readonly string[], settings: PinOpsSettings): Promise<OpsExitCode> {
  return runNotificationsRetryOps(
    NotificationsRetryOpsModule.forRoot({
      host: pinOpsHost(settings.env, settings.imports),
      // From the settings' environment, like the rest of the configuration: the audit names who ran it.
      defaultActor: () => cliActor(settings.env.USER),
      ...(settings.io ? { io: settings.io } : {}),
    }),
    argv,
  );
}
