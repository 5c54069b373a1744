import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { TEST_SERVER_URL_ENV } from './test-server';

/**
 * One PostgreSQL server for the whole run: DATABASE_URL's when set, otherwise an
 * embedded one. Each test file then creates its own database on it.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) {
    process.env[TEST_SERVER_URL_ENV] = process.env.DATABASE_URL;
    return;
  }
  const server = await startEmbeddedPostgres({ fast: true });
  process.env[TEST_SERVER_URL_ENV] = server.url;
  (globalThis as { __embeddedPostgres?: { stop(): Promise<void> } }).__embeddedPostgres = server;
}
