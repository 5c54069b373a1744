import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { NotificationsRetryError } from '../errors/notifications-retry.error';
import { NotificationChannelEntity } from '../persistence/notification-channel.entity';
import { ChannelCatalog } from './channel-catalog';
import type { ChannelConfig } from './channel-config';
import { parseChannelRow } from './parse-channel-row';
import { InjectNotificationsRetryDataSource } from '../persistence/notifications-retry-data-source';

/** Default catalog: `notification_channels`. A bad row is logged and left out; the rest carry on. */
@Injectable()
export class TypeOrmChannelCatalog extends ChannelCatalog {
  private readonly logger = new Logger(ChannelCatalog.name);

  constructor(@InjectNotificationsRetryDataSource() private readonly dataSource: DataSource) {
    super();
  }

  async getChannels(): Promise<readonly ChannelConfig[]> {
    const rows = await this.dataSource.getRepository(NotificationChannelEntity).find();
    const channels: ChannelConfig[] = [];
    for (const row of rows) {
      try {
        channels.push(parseChannelRow(row));
      } catch (error) {
        if (!(error instanceof NotificationsRetryError)) throw error;
        this.logger.error({
          msg: 'channel-config-invalid',
          event: 'channel-config-invalid',
          channel: row.key,
          errorCode: error.code,
          error: error.message,
        });
      }
    }
    return channels;
  }
}
