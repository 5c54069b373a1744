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
    private readonly worker: RetryWorkerHealthIndicator,
  ) {}

  /** 200 when PostgreSQL answers within 1.5 s and the worker cycles on schedule, 503 otherwise. */
  @Get()
  @HealthCheck()
  check(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.database.pingCheck('database', { timeout: 1500 }),
      () => this.worker.check('retryWorker'),
    ]);
  }
}
