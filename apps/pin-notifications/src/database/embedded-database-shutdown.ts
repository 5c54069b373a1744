import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** Stops the database this process started; provided only when there is one. */
export const STOP_EMBEDDED_DATABASE = Symbol('STOP_EMBEDDED_DATABASE');

/**
 * Stops the embedded database in AppModule's shutdown hook: after the retry
 * cycle in flight has finished (before-shutdown hooks) and the HTTP server has
 * closed, but before the shutdown hooks of AppModule's imports (Nest runs them
 * from the root down). bootstrapHost no longer passes `stopDatabase`: it stops
 * the database after `app.close()` (host-stop.ts), once every hook is done.
 */
@Injectable()
export class EmbeddedDatabaseShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(STOP_EMBEDDED_DATABASE) private readonly stopDatabase: () => Promise<void>,
    private readonly dataSource: DataSource,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // TypeORM closes its pool in its own shutdown hook, which runs after this one
    // (global modules shut down last). Closing the pool first keeps idle
    // connections from erroring when the server goes away under them.
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    await this.stopDatabase();
  }
}
