import { Logger } from '@nestjs/common';
import type { ChannelConfig } from './channel-config';
import { validateCatalogChannels } from './validate-channel-config';

/**
 * Where the worker learns channel settings. Read once per cycle. The default
 * reads `notification_channels`; a host may provide its own (config service,
 * feature-flag system) under this class as the DI token.
 *
 * The cycle reads any catalog through `readCatalogChannels`, which applies the
 * rules the default applies to a table row: an invalid entry is logged
 * (`channel-config-invalid`, an `InvalidChannelConfigError`) and left out, so
 * that its rows wait while the other channels carry on; a result that is not an
 * array fails the cycle with `InvalidChannelCatalogError`.
 */
export abstract class ChannelCatalog {
  abstract getChannels(): Promise<readonly ChannelConfig[]>;
}

/**
 * The channels of a catalog, validated. Whatever the catalog is (a subclass, a
 * plain object provided with `useValue`), its answer is checked here, at the one
 * place the worker reads it; the default catalog's rows pass unchanged.
 */
export async function readCatalogChannels(
  catalog: ChannelCatalog,
): Promise<readonly ChannelConfig[]> {
  const name = (catalog as object).constructor?.name;
  return checked(await catalog.getChannels(), !name || name === 'Object' ? 'ChannelCatalog' : name);
}

const logger = new Logger(ChannelCatalog.name);

function checked(result: unknown, catalogName: string): ChannelConfig[] {
  return validateCatalogChannels(result, catalogName, (error) =>
    logger.error({
      msg: 'channel-config-invalid',
      event: 'channel-config-invalid',
      catalog: catalogName,
      channel: error.channel,
      field: error.column,
      errorCode: error.code,
      error: error.message,
    }),
  );
}
