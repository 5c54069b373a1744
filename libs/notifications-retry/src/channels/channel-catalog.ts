import type { ChannelConfig } from './channel-config';

/**
 * Where the worker learns channel settings. Read once per cycle. The default
 * reads `notification_channels`; a host may provide its own (config service,
 * feature-flag system) under this class as the DI token.
 *
 * Return only channels you can vouch for: an invalid entry should be reported
 * and left out, so that its rows wait while the other channels carry on.
 */
export abstract class ChannelCatalog {
  abstract getChannels(): Promise<readonly ChannelConfig[]>;
}
