import { NonRetriableDeliveryError } from '../errors/non-retriable-delivery.error';
import { RetriableDeliveryError } from '../errors/retriable-delivery.error';
import { ThrottledDeliveryError } from '../errors/throttled-delivery.error';
import { webhookResponseError } from './webhook-response-error';

const NOW = Date.UTC(2026, 2, 14, 12, 0, 0);

describe('webhookResponseError', () => {
  it.each([400, 401, 403, 404, 405, 410, 413, 415, 422, 451, 499])(
    '%p → non-retriable http_%p',
    (status) => {
      const error = webhookResponseError(status, null, NOW);
      expect(error).toBeInstanceOf(NonRetriableDeliveryError);
      expect(error.code).toBe(`http_${status}`);
    },
  );

  it.each([408, 409, 425, 500, 501, 502, 503, 504, 599])('%p → retriable http_%p', (status) => {
    const error = webhookResponseError(status, null, NOW);
    expect(error).toBeInstanceOf(RetriableDeliveryError);
    expect(error.code).toBe(`http_${status}`);
  });

  it.each([300, 301, 302, 303, 307, 308, 399])(
    '%p (a redirect, not followed) → non-retriable',
    (status) => {
      const error = webhookResponseError(status, null, NOW);
      expect(error).toBeInstanceOf(NonRetriableDeliveryError);
      expect(error.message).toContain('redirect');
    },
  );

  it.each([100, 204, 299])(
    '%p (not an error fetch hands over) → retriable: a guess must not fail the row',
    (status) => {
      const error = webhookResponseError(status, null, NOW);
      expect(error).toBeInstanceOf(RetriableDeliveryError);
      expect(error.message).toBe(`webhook answered HTTP ${status}`);
    },
  );

  it('429 → throttled with the Retry-After delay', () => {
    const error = webhookResponseError(429, '30', NOW);
    expect(error).toBeInstanceOf(ThrottledDeliveryError);
    expect((error as ThrottledDeliveryError).retryAfterMs).toBe(30_000);
    expect(error.code).toBe('http_429');
  });

  it('429 without a usable Retry-After → throttled with no delay (the worker backs off)', () => {
    for (const header of [null, 'later']) {
      const error = webhookResponseError(429, header, NOW);
      expect(error).toBeInstanceOf(ThrottledDeliveryError);
      expect((error as ThrottledDeliveryError).retryAfterMs).toBeNull();
    }
  });

  it('503 with a Retry-After date → throttled until then', () => {
    const error = webhookResponseError(503, 'Sat, 14 Mar 2026 12:05:00 GMT', NOW);
    expect(error).toBeInstanceOf(ThrottledDeliveryError);
    expect((error as ThrottledDeliveryError).retryAfterMs).toBe(300_000);
    expect(error.code).toBe('http_503');
  });

  it('503 with an unusable Retry-After → an ordinary retriable failure', () => {
    const error = webhookResponseError(503, 'whenever', NOW);
    expect(error).toBeInstanceOf(RetriableDeliveryError);
  });

  it.each([
    [500, RetriableDeliveryError],
    [502, RetriableDeliveryError],
    [408, RetriableDeliveryError],
    [400, NonRetriableDeliveryError],
  ])('%p with a Retry-After is not throttled: only 429 and 503 pace us', (status, kind) => {
    const error = webhookResponseError(status, '5', NOW);
    expect(error).toBeInstanceOf(kind);
    expect(error).not.toBeInstanceOf(ThrottledDeliveryError);
  });

  it.each([301, 400, 404, 409, 429, 500, 503])(
    '%p: the error carries the status, which the worker stores before the text',
    (status) => {
      expect(webhookResponseError(status, null, NOW).httpStatus).toBe(status);
      expect(webhookResponseError(status, '5', NOW).httpStatus).toBe(status);
    },
  );

  it('the message is the status and a short reason only', () => {
    expect(webhookResponseError(400, null, NOW).message).toBe('webhook answered HTTP 400');
    expect(webhookResponseError(429, '5', NOW).message).toBe(
      'webhook answered HTTP 429 (retry after 5000 ms)',
    );
    // No usable Retry-After: no "(retry after …)" at all.
    expect(webhookResponseError(429, null, NOW).message).toBe('webhook answered HTTP 429');
    expect(webhookResponseError(429, 'later', NOW).message).toBe('webhook answered HTTP 429');
  });
});
