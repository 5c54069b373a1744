import type { DeliveryError } from '../errors/delivery.error';
import { NonRetriableDeliveryError } from '../errors/non-retriable-delivery.error';
import { RetriableDeliveryError } from '../errors/retriable-delivery.error';
import { ThrottledDeliveryError } from '../errors/throttled-delivery.error';
import { parseRetryAfterMs } from './parse-retry-after';

/**
 * 4xx answers that say "not now" rather than "never". 409 is what providers
 * with idempotency keys answer while an earlier request with the same key is
 * still being processed (our previous attempt timed out on our side); failing
 * the row for good then would mark a notification Failed that is being delivered.
 */
const RETRIABLE_CLIENT_ERRORS = new Set([408, 409, 425]);

/**
 * What a non-2xx webhook answer means for the row. The message holds the
 * status only: response bodies often echo the recipient's address.
 */
export function webhookResponseError(
  status: number,
  retryAfterHeader: string | null,
  nowMs: number,
): DeliveryError {
  const code = `http_${status}`;
  const answered = `webhook answered HTTP ${status}`;
  const retryAfterMs = parseRetryAfterMs(retryAfterHeader, nowMs);
  const retryAfterText = retryAfterMs === null ? '' : ` (retry after ${retryAfterMs} ms)`;
  const options = { httpStatus: status };

  // A 503 that says when to come back is the provider pacing us, like a 429:
  // the attempt should not count against the notification.
  if (status === 429 || (status === 503 && retryAfterMs !== null)) {
    return new ThrottledDeliveryError(retryAfterMs, code, `${answered}${retryAfterText}`, options);
  }
  if (status >= 500 || RETRIABLE_CLIENT_ERRORS.has(status)) {
    return new RetriableDeliveryError(code, answered, options);
  }
  if (status >= 300 && status < 400) {
    // Redirects are not followed: a redirected POST may lose its body, and its
    // credentials would go wherever the Location header points.
    return new NonRetriableDeliveryError(
      code,
      `${answered} (a redirect: configure the final URL)`,
      options,
    );
  }
  if (status >= 400) return new NonRetriableDeliveryError(code, answered, options);
  // Not reachable through fetch (1xx are not exposed, 2xx are successes); a guess must not lose the row.
  return new RetriableDeliveryError(code, answered, options);
}
