import { Logger } from '@nestjs/common';
import type { ChannelConfig } from './channel-config';
import { validateCatalogChannels } from './validate-channel-config';

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
 */
export abstract class ChannelCatalog {
  abstract getChannels(): Promise<readonly ChannelConfig[]>;

  constructor() {
    // The subclass's method, found through the prototype chain: `this` already has its prototype.
    const read = this.getChannels as (() => Promise<unknown>) | undefined;
    if (typeof read !== 'function') return;
    const catalogName = new.target.name;
    const logger = new Logger(ChannelCatalog.name);
    Object.defineProperty(this, 'getChannels', {
      configurable: true,
      writable: true,
      enumerable: false,
      value: async (): Promise<readonly ChannelConfig[]> =>
        validateCatalogChannels(await read.call(this), catalogName, (error) =>
          logger.error({
            msg: 'channel-config-invalid',
            event: 'channel-config-invalid',
            catalog: catalogName,
            channel: error.channel,
            field: error.column,
            errorCode: error.code,
            error: error.message,
          }),
        ),
    });
  }
}
