import { Logger } from '@nestjs/common';
import type { ChannelConfig } from './channel-config';
import { validateCatalogChannels } from './validate-channel-config';

/** Marks a `getChannels` whose result is already validated. */
const VALIDATED = Symbol('ChannelCatalog.validated');

type GetChannels = (() => Promise<readonly ChannelConfig[]>) & { [VALIDATED]?: true };

/**
 * Where the worker learns channel settings. Read once per cycle. The default
 * reads `notification_channels`; a host may provide its own (config service,
 * feature-flag system) under this class as the DI token.
 *
 * What any catalog returns is validated by the rules the default applies to a
 * table row: an invalid entry is logged (`channel-config-invalid`, an
 * `InvalidChannelConfigError`) and left out, so that its rows wait while the
 * other channels carry on; a result that is not an array fails the cycle with
 * `InvalidChannelCatalogError`. Declare `getChannels` as a method (not an arrow
 * property) and extend this class: the check wraps the method at construction.
 * (`readCatalogChannels` validates a catalog that does neither.)
 */
export abstract class ChannelCatalog {
  abstract getChannels(): Promise<readonly ChannelConfig[]>;

  constructor() {
    // The subclass's method, found through the prototype chain: `this` already has its prototype.
    const read = this.getChannels as (() => Promise<unknown>) | undefined;
    if (typeof read !== 'function') return;
    const catalogName = new.target.name;
    const validated: GetChannels = async () => checked(await read.call(this), catalogName);
    validated[VALIDATED] = true;
    Object.defineProperty(this, 'getChannels', {
      configurable: true,
      writable: true,
      enumerable: false,
      value: validated,
    });
  }
}

/**
 * The channels of any catalog, validated: through the wrapped method when the
 * catalog extends ChannelCatalog, otherwise (a plain object provided with
 * `useValue`, an arrow-function property) validated here.
 */
export async function readCatalogChannels(
  catalog: ChannelCatalog,
): Promise<readonly ChannelConfig[]> {
  const read = catalog.getChannels as GetChannels;
  if (read[VALIDATED]) return read.call(catalog);
  const name = (catalog as object).constructor?.name ?? 'ChannelCatalog';
  return checked(await read.call(catalog), name === 'Object' ? 'ChannelCatalog' : name);
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
