import { Inject, Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { RetryWorkerState } from '../cycle/retry-worker-state';
import { LastCompletedCycleRead } from '../locking/last-completed-cycle-read';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import { judgeRetryWorkerHealth, type RetryWorkerHealth } from './retry-worker-health';

/**
 * The worker's verdict for /health and the operations' status
 * (judgeRetryWorkerHealth): whether some instance completed a cycle within
 * `healthStaleMultiple` schedule intervals, as the lease row records it, with
 * this instance's own view as details. Answers within about a second whatever
 * the database does. It reads the cycle's state and never runs one.
 */
@Injectable()
export class RetryWorkerHealthService {
  // Monotonic, not the injectable Clock: the start-up allowance is about the process.
  private readonly startedAt = performance.now();

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
    private readonly state: RetryWorkerState,
    private readonly completedCycles: LastCompletedCycleRead,
  ) {}

  async health(): Promise<RetryWorkerHealth> {
    const completed = await this.completedCycles.read();
    return judgeRetryWorkerHealth({
      enabled: this.options.enabled,
      staleAfterMs: this.options.scheduleIntervalMs * this.options.healthStaleMultiple,
      uptimeMs: performance.now() - this.startedAt,
      completed,
      lastCycle: this.state.lastCycle,
      now: new Date(),
      failedBacklog: this.state.failedBacklog,
      misconfiguredChannels: this.state.misconfiguredChannels,
      pausedChannels: this.state.pausedChannels,
    });
  }
}
