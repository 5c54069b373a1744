import { Controller, Get } from '@nestjs/common';
import {
  HealthCheck,
  HealthCheckService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
} from '@nestjs/terminus';
import { RetryWorkerHealthIndicator } from '@pin/notifications-retry';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly retryWorker: RetryWorkerHealthIndicator,
  ) {}

  /** 200 while PostgreSQL answers and some instance completes cycles on schedule, 503 otherwise. */
  @Get()
  @HealthCheck()
  check(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.database.pingCheck('database', { timeout: 1500 }),
      () => this.retryWorker.check('retryWorker'),
    ]);
  }
}
