import { appendFileSync } from 'node:fs';
import { ExportResultCode, hrTimeToMilliseconds, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * Writes every ended span as one JSON line, synchronously, so that a SIGKILL
 * loses at most the span being written. Everything a span carries that could
 * hold personal data is kept: attributes, status message, events (exceptions)
 * and links.
 */
export class FileSpanExporter implements SpanExporter {
  constructor(private readonly file: string) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    try {
      const lines = spans.map((span) =>
        JSON.stringify({
          name: span.name,
          traceId: span.spanContext().traceId,
          spanId: span.spanContext().spanId,
          parentSpanId: span.parentSpanContext?.spanId,
          startMs: hrTimeToMilliseconds(span.startTime),
          durationMs: hrTimeToMilliseconds(span.duration),
          attributes: span.attributes,
          status: span.status,
          events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
          links: span.links.map((link) => ({ attributes: link.attributes })),
          resource: span.resource.attributes,
        }),
      );
      if (lines.length > 0) appendFileSync(this.file, `${lines.join('\n')}\n`);
      resultCallback({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      resultCallback({
        code: ExportResultCode.FAILED,
        error: error instanceof Error ? error : new Error(String(error)),
      });
    }
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
