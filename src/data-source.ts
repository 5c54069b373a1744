/**
 * The DataSource the TypeORM CLI works on (`npm run migration:run`, or
 * `npx typeorm-ts-node-commonjs -d src/data-source.ts migration:show`).
 * Same entities and migrations as the app; the database is DATABASE_URL's.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
// Relative, not the @pin alias: the TypeORM CLI runs this file through plain ts-node, without tsconfig-paths.
import {
  notificationsRetryEntities,
  notificationsRetryMigrations,
} from '../libs/notifications-retry/src';

const url = process.env.DATABASE_URL?.trim();
if (!url) {
  throw new Error(
    'DATABASE_URL is not set: the TypeORM CLI needs the database to work on (postgres://user:password@host:5432/db)',
  );
}

export default new DataSource({
  type: 'postgres',
  url,
  entities: notificationsRetryEntities,
  migrations: notificationsRetryMigrations,
  synchronize: false,
  migrationsRun: false,
});
