import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { seedDemoData } from '../../../../src/demo/seed-demo-data';

/**
 * Seeds the demo rows while the application starts: after the migrations (the
 * DataSource is initialised before anything that injects it) and before the
 * retry schedule starts (that happens at bootstrap, after every module init).
 */
@Injectable()
export class DemoDataSeeder implements OnModuleInit {
  private readonly logger = new Logger('DemoData');

  constructor(private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    const result = await seedDemoData(this.dataSource);
    // Counts only: the rows themselves hold (fake) personal data.
    this.logger.log({ msg: 'demo-data-seeded', event: 'demo-data-seeded', ...result });
  }
}
