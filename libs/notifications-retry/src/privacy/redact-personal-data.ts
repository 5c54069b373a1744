import { decodeEchoedText } from './decode-echoed-text';
import { PERSONAL_RUN_LENGTH, personalDataMarks } from './personal-data-marks';
import type { PersonalValues } from './personal-values';

export type { PersonalValues } from './personal-values';

const REDACTED = '[redacted]';
/**
 * Only this much of a provider's error text is read: what is stored is shorter
 * still, and a 1 MB response body echoed into an error must not cost the cycle
 * more than a few milliseconds.
 */
export const MAX_SCANNED_ERROR_LENGTH = 8_192;
const MAX_STORED_LENGTH = 500;
// An e-mail address is at most this long: what is left of one cut at the scan bound is dropped whole.
const MAX_EMAIL_LENGTH = 254;
const WHITESPACE = /\s/;
const NUL = '\u0000';
const REPLACEMENT_CHARACTER = '\uFFFD';
const ELLIPSIS = '…';

/**
 * Makes a provider's error text safe to store and log. Providers echo the
 * request back ("invalid recipient bob@example.com"), URL-encoded, inside a
 * JSON body (escaped, sometimes twice), in capitals, or cut short. So the text
 * is decoded first, and then every run of 8 characters it shares with the
 * row's address, subject or body (ignoring case), each of those values whole,
 * and anything shaped like an e-mail address or a phone number become
 * `[redacted]`. What is returned is the decoded text, so that what an operator
 * reads is what was checked. Bounded in length: it ends up in a text column
 * and in log lines.
 */
export function redactPersonalData(text: string, values: PersonalValues = {}): string {
  const cut = text.length > MAX_SCANNED_ERROR_LENGTH;
  let decoded = decodeEchoedText(cut ? text.slice(0, MAX_SCANNED_ERROR_LENGTH) : text);
  if (cut) decoded = withoutCutTail(decoded);
  const marks = personalDataMarks(decoded, values, { shapes: true });
  // PostgreSQL text cannot hold NUL: one in a provider's error text would fail the row's UPDATE,
  // roll the attempt back and have the row sent again every cycle.
  const safe = replaceMarked(decoded, marks).replaceAll(NUL, REPLACEMENT_CHARACTER);
  if (safe.length > MAX_STORED_LENGTH) return `${safe.slice(0, MAX_STORED_LENGTH)}${ELLIPSIS}`;
  return cut ? `${safe}${ELLIPSIS}` : safe;
}

/**
 * A value cut at the scan bound may show fewer characters than a run, too few
 * to be recognised: the tail that could hold one goes, and the word it ends
 * (an e-mail address cut before its dot has no shape left).
 */
function withoutCutTail(decoded: string): string {
  const kept = decoded.slice(0, Math.max(0, decoded.length - (PERSONAL_RUN_LENGTH - 1)));
  let end = kept.length;
  while (end > 0 && kept.length - end < MAX_EMAIL_LENGTH && !WHITESPACE.test(kept[end - 1])) end--;
  return kept.slice(0, end);
}

/** Each run of marked characters becomes one `[redacted]`. */
function replaceMarked(text: string, marks: Uint8Array): string {
  let out = '';
  let at = 0;
  while (at < text.length) {
    const next = marks.indexOf(marks[at] === 1 ? 0 : 1, at);
    const end = next === -1 ? text.length : next;
    out += marks[at] === 1 ? REDACTED : text.slice(at, end);
    at = end;
  }
  return out;
}
