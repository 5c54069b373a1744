import { Injectable } from '@nestjs/common';
import type { ExcludedChannel, MisconfiguredChannel } from '../vocabulary/cycle-report';

/** This instance's last tick: a cycle it completed, or one skipped because the lease was held. */
export interface LastCycle {
  readonly at: Date;
  readonly status: 'completed' | 'lease-held';
}

/**
 * What this instance's cycles have learned, kept for whoever reads the
 * worker's state (the health verdict, the operations' status) between
 * cycles. Written only by the cycle's parts; no personal data.
 */
@Injectable()
export class RetryWorkerState {
  lastCycle: LastCycle | null = null;
  /** Failed rows awaiting a retry, as of the last completed count. */
  failedBacklog: number | null = null;
  misconfiguredChannels: readonly MisconfiguredChannel[] = [];
  /** Channels left out with due rows waiting, as of the last completed count. */
  excludedChannels: readonly ExcludedChannel[] = [];
  pausedChannels: readonly string[] = [];
}
