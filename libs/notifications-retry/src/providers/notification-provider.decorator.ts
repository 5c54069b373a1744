import { DiscoveryService } from '@nestjs/core';

/**
 * Marks a `ProviderAdapter` class as the sender for a provider key, e.g.
 * `@NotificationProvider('sendgrid')`. Channels name the key in
 * `notification_channels.provider_key`.
 */
export const NotificationProvider = DiscoveryService.createDecorator<string>();
