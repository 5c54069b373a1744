import { propagation, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import {
  NonRetriableDeliveryError,
  RetriableDeliveryError,
  type CompletedCycleReport,
  type OutgoingNotification,
  type SendResult,
} from '@pin/notifications-retry';
import { completed } from './support/cycle-reports';
import {
  insertChannel,
  insertNotification,
  minutesAgo,
  outboxEvents,
  resetTables,
} from './support/fixtures';
import {
  leakedValues,
  personalMarker,
  personalValues,
  type PersonalValues,
} from './support/personal-data';
import { useRetryDatabase, type RetryTestApp } from './support/retry-test-app';
import {
  ScriptedProviderAdapter,
  scriptedAdapterFor,
  type ScriptedAdapter,
} from './support/scripted-provider-adapter';

const SmsGatewayAdapter = scriptedAdapterFor('sms-gateway');
const CYCLE_SPAN = 'notifications.retry.cycle';
const SEND_SPAN = 'notifications.retry.provider.send';

type Outcome = 'sent' | 'retriable' | 'rejected';

/**
 * OpenTelemetry through the API only, with an in-memory SDK registered by the
 * test: a span per cycle, a child span per provider call, and the provider
 * span's context in the outbox headers.
 */
describe('observability: OpenTelemetry spans of the retry cycle', () => {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const marker = personalMarker();
  const seeded: PersonalValues[] = [];
  const behaviours = new Map<string, Outcome>();
  const t = useRetryDatabase();
  let app: RetryTestApp;
  let sms: ScriptedAdapter;

  const respond = (message: OutgoingNotification): SendResult => {
    switch (behaviours.get(message.id)) {
      case 'sent':
        return { providerMessageId: `pm-${message.id}` };
      case 'rejected':
        throw new NonRetriableDeliveryError(
          'recipient_rejected',
          `rejected ${message.recipientAddress}: ${message.subject}`,
        );
      default:
        throw new RetriableDeliveryError(
          'http_503',
          `bad ${message.recipientAddress} ${message.body}`,
        );
    }
  };

  beforeAll(async () => {
    expect(trace.setGlobalTracerProvider(tracerProvider)).toBe(true);
    expect(propagation.setGlobalPropagator(new W3CTraceContextPropagator())).toBe(true);
    // One app for the file: the nested describes arrange their cycles in their own beforeAll.
    app = await t.start({
      options: { concurrency: 2 },
      adapters: [ScriptedProviderAdapter, SmsGatewayAdapter],
    });
    sms = app.module.get(SmsGatewayAdapter);
    app.provider.respondWith(respond);
    sms.respondWith(respond);
  });

  afterAll(async () => {
    // After the harness has closed the app and dropped the database.
    await tracerProvider.shutdown();
    trace.disable();
    propagation.disable();
  });

  async function seed(
    channel: string,
    minutesOverdue: number,
    outcome: Outcome | null,
    attempts = 0,
  ): Promise<string> {
    const values = personalValues(marker, seeded.length, channel === 'sms' ? 'phone' : 'email');
    seeded.push(values);
    const id = await insertNotification(app.dataSource, {
      channel,
      tenantId: '3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a',
      ...values,
      status: 'Failed',
      attempts,
      nextAttemptAt: minutesAgo(app.clock.now(), minutesOverdue),
    });
    if (outcome) behaviours.set(id, outcome);
    return id;
  }

  const spansNamed = (name: string): ReadableSpan[] =>
    exporter.getFinishedSpans().filter((span) => span.name === name);

  describe('a cycle with provider calls on two channels', () => {
    const ids: Record<string, string> = {};
    let report: CompletedCycleReport;
    let spans: ReadableSpan[];
    let cycleSpan: ReadableSpan;
    let sendSpans: ReadableSpan[];

    beforeAll(async () => {
      await insertChannel(app.dataSource, {
        key: 'email',
        providerKey: 'scripted',
        maxAttempts: 3,
      });
      await insertChannel(app.dataSource, {
        key: 'sms',
        providerKey: 'sms-gateway',
        maxAttempts: 3,
      });
      ids.emailSent = await seed('email', 30, 'sent');
      ids.emailRetried = await seed('email', 29, 'retriable');
      ids.emailRejected = await seed('email', 28, 'rejected');
      // Attempts used up before the cycle (the maximum was lowered): terminal with no provider call.
      ids.emailExhausted = await seed('email', 27, null, 3);
      ids.smsSent = await seed('sms', 26, 'sent');
      ids.smsLastAttempt = await seed('sms', 25, 'retriable', 2);

      exporter.reset();
      report = completed(await app.cycles.runCycle({ correlationId: 'corr-trace-1' }));
      spans = exporter.getFinishedSpans();
      [cycleSpan] = spansNamed(CYCLE_SPAN);
      sendSpans = spansNamed(SEND_SPAN);
    });

    it('ran the cycle the test arranged', () => {
      expect(report.counts).toMatchObject({ processed: 6, sent: 2, retried: 1, terminal: 3 });
      expect(app.provider.calls).toHaveLength(3);
      expect(sms.calls).toHaveLength(2);
    });

    it('records one cycle span with the run id, correlation id, fencing token and result', () => {
      expect(spans.filter((span) => span.name === CYCLE_SPAN)).toHaveLength(1);
      expect(cycleSpan.parentSpanContext).toBeUndefined();
      expect(cycleSpan.instrumentationScope.name).toBe('@pin/notifications-retry');
      expect(cycleSpan.attributes).toEqual({
        'notifications.run_id': report.runId,
        'notifications.correlation_id': 'corr-trace-1',
        'notifications.fencing_token': report.fencingToken,
        'notifications.stop_reason': report.stopReason,
        'notifications.processed': 6,
      });
      expect(cycleSpan.status.code).not.toBe(SpanStatusCode.ERROR);
      expect(spans).toHaveLength(1 + sendSpans.length);
    });

    it('records one child span per provider call, and none where no call was made', () => {
      const calls = [...app.provider.calls, ...sms.calls].map((call) => call.message.id);
      expect(sendSpans).toHaveLength(calls.length);
      expect(
        sendSpans.map((span) => span.attributes['notifications.notification_id']).sort(),
      ).toEqual([...calls].sort());
      expect(calls).not.toContain(ids.emailExhausted);
      const { traceId, spanId } = cycleSpan.spanContext();
      for (const span of sendSpans) {
        expect(span.spanContext().traceId).toBe(traceId);
        expect(span.parentSpanContext?.spanId).toBe(spanId);
        expect(span.parentSpanContext?.traceId).toBe(traceId);
        // A child lies within its parent.
        expect(span.startTime[0] * 1e9 + span.startTime[1]).toBeGreaterThanOrEqual(
          cycleSpan.startTime[0] * 1e9 + cycleSpan.startTime[1],
        );
        expect(span.endTime[0] * 1e9 + span.endTime[1]).toBeLessThanOrEqual(
          cycleSpan.endTime[0] * 1e9 + cycleSpan.endTime[1],
        );
      }
    });

    it('puts notification id, run id, correlation id, channel, provider and outcome on each provider span', () => {
      const send = (id: string) =>
        sendSpans.find((span) => span.attributes['notifications.notification_id'] === id);
      const expected = (id: string, channel: string, provider: string, outcome: string) => ({
        'notifications.notification_id': id,
        'notifications.run_id': report.runId,
        'notifications.correlation_id': 'corr-trace-1',
        'notifications.channel': channel,
        'notifications.provider': provider,
        'notifications.outcome': outcome,
      });
      expect(send(ids.emailSent)?.attributes).toEqual(
        expected(ids.emailSent, 'email', 'scripted', 'sent'),
      );
      expect(send(ids.emailRetried)?.attributes).toEqual(
        expected(ids.emailRetried, 'email', 'scripted', 'retriable'),
      );
      expect(send(ids.emailRejected)?.attributes).toEqual(
        expected(ids.emailRejected, 'email', 'scripted', 'non-retriable'),
      );
      expect(send(ids.smsSent)?.attributes).toEqual(
        expected(ids.smsSent, 'sms', 'sms-gateway', 'sent'),
      );
      expect(send(ids.smsLastAttempt)?.attributes).toEqual(
        expected(ids.smsLastAttempt, 'sms', 'sms-gateway', 'retriable'),
      );
      // Failed calls are errors, with the error code (never the provider's text) as the message.
      expect(send(ids.emailSent)?.status.code).not.toBe(SpanStatusCode.ERROR);
      expect(send(ids.emailRetried)?.status).toEqual({
        code: SpanStatusCode.ERROR,
        message: 'http_503',
      });
      expect(send(ids.emailRejected)?.status).toEqual({
        code: SpanStatusCode.ERROR,
        message: 'recipient_rejected',
      });
    });

    it('writes the provider span’s W3C traceparent into each outbox row’s headers', async () => {
      const events = await outboxEvents(app.dataSource);
      // Final outcomes only: two sent, three terminal (one without a call).
      expect(events.map((event) => event.message_key).sort()).toEqual(
        [
          ids.emailSent,
          ids.emailRejected,
          ids.emailExhausted,
          ids.smsSent,
          ids.smsLastAttempt,
        ].sort(),
      );
      const { traceId } = cycleSpan.spanContext();
      for (const event of events) {
        expect(event.headers).toMatchObject({
          correlationId: 'corr-trace-1',
          jobRunId: report.runId,
        });
        if (event.message_key === ids.emailExhausted) {
          // No provider call, so no provider span to point at.
          expect(event.headers).not.toHaveProperty('traceparent');
          continue;
        }
        const span = sendSpans.find(
          (s) => s.attributes['notifications.notification_id'] === event.message_key,
        );
        expect(span).toBeDefined();
        expect(event.headers.traceparent).toBe(`00-${traceId}-${span!.spanContext().spanId}-01`);
      }
    });

    it('never puts an address, subject or body into a span name, attribute, status or event', () => {
      const exported = JSON.stringify(
        spans.map((span) => ({
          name: span.name,
          attributes: span.attributes,
          status: span.status,
          events: span.events,
          links: span.links,
          resource: span.resource.attributes,
        })),
      );
      expect(exported).toContain(ids.emailSent);
      expect(leakedValues(exported, marker, seeded)).toEqual([]);
    });
  });

  describe('without a registered propagator', () => {
    beforeAll(async () => {
      await resetTables(app.dataSource);
      propagation.disable();
      exporter.reset();
    });

    it('still records the spans, and leaves traceparent out of the outbox headers', async () => {
      await insertChannel(app.dataSource, { key: 'email', providerKey: 'scripted' });
      const id = await seed('email', 10, 'sent');

      const report = completed(await app.cycles.runCycle());

      expect(report.counts.sent).toBe(1);
      expect(spansNamed(CYCLE_SPAN)).toHaveLength(1);
      expect(
        spansNamed(SEND_SPAN).map((s) => s.attributes['notifications.notification_id']),
      ).toEqual([id]);
      const [event] = await outboxEvents(app.dataSource, id);
      expect(event.headers).toEqual({
        correlationId: report.correlationId,
        jobRunId: report.runId,
      });
    });
  });
});
