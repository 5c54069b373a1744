import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  NotificationsRetryModule,
  createMigratedDataSource,
  notificationsRetryEntities,
  notificationsRetryMigrations,
} from '@pin/notifications-retry';
import { AcmeEmailModule } from './acme-email.adapter';
import { HealthController } from './health.controller';
import { retryOptionsFromEnv } from './retry-options';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      useFactory: () => ({
        type: 'postgres',
        url: process.env.DATABASE_URL,
        entities: [...notificationsRetryEntities /* , your entities */],
        migrations: [...notificationsRetryMigrations /* , your migrations */],
        // Not migrationsRun: replicas starting together would race on the same migrations.
        migrationsRun: false,
        synchronize: false,
        extra: { max: 10 }, // at least 2; provider calls hold no connection
      }),
      // Runs every pending migration under a PostgreSQL advisory lock before the app uses the database.
      dataSourceFactory: (options) => {
        if (!options) throw new Error('TypeORM options are missing');
        return createMigratedDataSource(options);
      },
    }),
    ScheduleModule.forRoot(), // the host's: the retry module adds its cron job to this registry
    NotificationsRetryModule.forRootAsync({
      useFactory: () => retryOptionsFromEnv(process.env),
    }),
    TerminusModule, // HealthCheckService and TypeOrmHealthIndicator for the controller
    AcmeEmailModule, // your adapters: the retry module finds them wherever they are declared
  ],
  controllers: [HealthController],
})
export class AppModule {}
