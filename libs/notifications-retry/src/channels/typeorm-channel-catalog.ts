import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InvalidChannelConfigError } from '../errors/invalid-channel-config.error';
import { NotificationChannelEntity } from '../persistence/notification-channel.entity';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';
import { ChannelCatalog } from './channel-catalog';
import type { ChannelConfig } from './channel-config';
import { parseChannelRow } from './parse-channel-row';

/** Default catalog: `notification_channels`. A bad row is reported and left out; the rest carry on. */
@Injectable()
export class TypeOrmChannelCatalog extends ChannelCatalog {
  constructor(@InjectNotificationsRetryDataSource() private readonly dataSource: DataSource) {
    super();
  }

  async getChannels(
    reportInvalid: (problem: InvalidChannelConfigError) => void = () => undefined,
  ): Promise<readonly ChannelConfig[]> {
    const rows = await this.dataSource.getRepository(NotificationChannelEntity).find();
    const channels: ChannelConfig[] = [];
    for (const row of rows) {
      try {
        channels.push(parseChannelRow(row));
      } catch (error) {
        if (!(error instanceof InvalidChannelConfigError)) throw error;
        reportInvalid(error);
      }
    }
    return channels;
  }
}
