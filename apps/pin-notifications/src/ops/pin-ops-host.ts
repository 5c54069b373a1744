import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { OpsArgumentError, type OpsHostFactory } from '@pin/notifications-retry/ops-cli';
import { AppModule } from '../app.module';
import { parseAppConfig, type AppConfig } from '../config/app-config';
import { InvalidEnvironmentVariableError } from '../config/invalid-environment-variable.error';
import { createRootLogger } from '../logging/root-logger';

/**
 * The Pin app as `npm run ops` opens it: AppModule from the app's own
 * environment, in its ops mode (see `AppModuleOptions.ops`), beside the
 * modules a host adds (a team's adapters), so that a command sees and sends
 * through exactly what the app's worker would.
 *
 * Demo follows the app's rule for a given DATABASE_URL: `SEED_DEMO_DATA`
 * (true: the demo provider and the push stub, as the demo app registers them;
 * the CLI itself never seeds). The app's other default, demo on an embedded
 * database, has no CLI counterpart: the CLI never starts a database, it is
 * pointed at one.
 */
export function pinOpsHost(
  env: NodeJS.ProcessEnv,
  imports: ReadonlyArray<Type | DynamicModule> = [],
): OpsHostFactory {
  return ({ retry, stderr }) => {
    const config = readConfig(env);
    if (config.databaseUrl === null) {
      throw new OpsArgumentError(
        "DATABASE_URL is not set: the ops CLI works on the app's database (set it as for the app; an embedded database would be empty)",
      );
    }
    @Module({
      imports: [
        AppModule.forRoot({
          databaseUrl: config.databaseUrl,
          retryWorker: config.retryWorker,
          demo: config.seedDemoData ?? false,
          // stdout is the command's result alone.
          logger: createRootLogger(config.logLevel, { write: (line: string) => stderr(line) }),
          ops: retry,
        }),
        ...imports,
      ],
    })
    class PinOpsHost {}
    return PinOpsHost;
  };
}

function readConfig(env: NodeJS.ProcessEnv): AppConfig {
  try {
    return parseAppConfig(env);
  } catch (error) {
    // A bad variable is a bad command line as far as the operator is concerned: exit 2, named.
    if (error instanceof InvalidEnvironmentVariableError) throw new OpsArgumentError(error.message);
    throw error;
  }
}
