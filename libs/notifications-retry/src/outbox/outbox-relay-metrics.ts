import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { OutboxBacklog } from './outbox-relay.repository';
import { OutboxMetricName as M } from './outbox-metric-names';

/**
 * The relay's metrics, declared only where a relay runs (a process without one
 * would report an empty backlog it never looked at). No labels: one topic
 * today, and an event id or key must never become a label.
 */
export class OutboxRelayMetrics {
  private readonly unpublished: Gauge;
  private readonly oldestAge: Gauge;
  private readonly parkedRows: Gauge;
  private readonly published: Counter;
  private readonly parked: Counter;
  private readonly failures: Counter;
  private readonly retentionDeleted: Counter;
  private readonly lastPass: Gauge;
  private readonly publishDuration: Histogram;

  constructor(registry: Registry) {
    const gauge = (name: string, help: string): Gauge =>
      (registry.getSingleMetric(name) as Gauge | undefined) ??
      new Gauge({ name, help, registers: [registry] });
    const counter = (name: string, help: string): Counter =>
      (registry.getSingleMetric(name) as Counter | undefined) ??
      new Counter({ name, help, registers: [registry] });
    this.unpublished = gauge(
      M.unpublishedRows,
      'Outbox events not yet published (parked ones excluded), as of the last look',
    );
    this.oldestAge = gauge(
      M.oldestUnpublishedAge,
      'Age in seconds of the oldest unpublished outbox event (0 when none), by the database clock',
    );
    this.parkedRows = gauge(
      M.parkedRows,
      'Outbox events parked after a permanent publish failure, waiting for an operator',
    );
    this.published = counter(M.published, 'Outbox events published by this relay');
    this.parked = counter(M.parked, 'Outbox events parked by this relay (permanent failure)');
    this.failures = counter(
      M.publishFailures,
      'Retriable publish failures of outbox events (held back by backoff)',
    );
    this.retentionDeleted = counter(
      M.retentionDeleted,
      'Published outbox rows deleted by retention',
    );
    this.lastPass = gauge(
      M.lastRelayPass,
      'Unix time of the last completed relay pass (claim, publish, write back), even an empty one',
    );
    this.publishDuration =
      (registry.getSingleMetric(M.publishDuration) as Histogram | undefined) ??
      new Histogram({
        name: M.publishDuration,
        help: "Duration of one publisher call (a batch, until the broker's acknowledgements) in milliseconds",
        buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1_000, 5_000, 10_000, 30_000],
        registers: [registry],
      });
    for (const c of [this.published, this.parked, this.failures, this.retentionDeleted]) c.inc(0);
  }

  backlog(backlog: OutboxBacklog): void {
    this.unpublished.set(backlog.unpublished);
    this.oldestAge.set(backlog.oldestAgeSeconds);
    this.parkedRows.set(backlog.parked);
  }

  batch(published: number, failed: number, parked: number, durationMs: number): void {
    this.published.inc(published);
    this.failures.inc(failed);
    this.parked.inc(parked);
    this.publishDuration.observe(durationMs);
  }

  passCompleted(at: Date): void {
    this.lastPass.set(at.getTime() / 1000);
  }

  retention(deleted: number): void {
    this.retentionDeleted.inc(deleted);
  }
}
