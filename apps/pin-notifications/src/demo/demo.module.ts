import { Module, type DynamicModule } from '@nestjs/common';
import { DemoDataSeeder } from './demo-data.seeder';
import { DemoFlakyProviderAdapter } from './demo-flaky.provider-adapter';

/**
 * Demo rows and the flaky demo provider, registered the way a team registers
 * its own adapter: in its own module, found by the retry module at start.
 */
@Module({})
export class DemoModule {
  /** `seed: false` for the ops CLI: it sends through the demo provider like the app, but never writes demo rows. */
  static forRoot(options: { readonly seed: boolean }): DynamicModule {
    return {
      module: DemoModule,
      providers: [DemoFlakyProviderAdapter, ...(options.seed ? [DemoDataSeeder] : [])],
    };
  }
}
