import { Module } from '@nestjs/common';
import { DemoDataSeeder } from './demo-data.seeder';
import { DemoFlakyProviderAdapter } from './demo-flaky.provider-adapter';

/**
 * Demo rows and the flaky demo provider, registered the way a team registers
 * its own adapter: in its own module, found by the retry module at start.
 */
@Module({
  providers: [DemoFlakyProviderAdapter, DemoDataSeeder],
})
export class DemoModule {}
