import { Injectable, Module } from '@nestjs/common';
import { NotificationProvider, WebhookProviderAdapter } from '@pin/notifications-retry';

/** Where Acme's e-mail API is and the token it wants, read once at start. */
export class AcmeEmailSettings {
  constructor(
    readonly url: string,
    readonly token: string,
  ) {}

  static fromEnv(env: NodeJS.ProcessEnv): AcmeEmailSettings {
    const url = env.ACME_EMAIL_URL;
    const token = env.ACME_EMAIL_TOKEN;
    // Names the variable, never its value: the token is a secret.
    if (!url) throw new Error('ACME_EMAIL_URL must be set (the URL of the Acme e-mail API)');
    if (!token) throw new Error('ACME_EMAIL_TOKEN must be set');
    return new AcmeEmailSettings(url, token);
  }
}

/** Channels whose notification_channels.provider_key is 'acme-email' are sent through this. */
@Injectable()
@NotificationProvider('acme-email')
export class AcmeEmailAdapter extends WebhookProviderAdapter {
  constructor(settings: AcmeEmailSettings) {
    super({ url: settings.url, headers: { authorization: `Bearer ${settings.token}` } });
  }
}

@Module({
  providers: [
    { provide: AcmeEmailSettings, useFactory: () => AcmeEmailSettings.fromEnv(process.env) },
    AcmeEmailAdapter,
  ],
})
export class AcmeEmailModule {}
