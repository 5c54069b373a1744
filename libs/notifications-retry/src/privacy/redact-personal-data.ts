const REDACTED = '[redacted]';
const EMAIL = /[^\s@"'<>(),;:]+@[^\s@"'<>(),;:]+\.[^\s@"'<>(),;:]+/g;
// Seven or more digits, optionally grouped: phone numbers, card-like numbers.
const LONG_NUMBER = /\+?\d[\d\s().-]{5,}\d/g;
// Only values this long are searched for verbatim; shorter ones would blank out ordinary words.
const MIN_VERBATIM_LENGTH = 4;
const MAX_STORED_LENGTH = 500;
const NUL = '\u0000';
const REPLACEMENT_CHARACTER = '\uFFFD';

/** The personal values of one notification, searched for verbatim. */
export interface PersonalValues {
  readonly recipientAddress?: string | null;
  readonly subject?: string | null;
  readonly body?: string | null;
}

/**
 * Makes a provider's error text safe to store and log. Providers often echo the
 * address ("invalid recipient bob@example.com") or the content back, so the row's
 * own values are removed first, then anything shaped like an e-mail or phone.
 * Bounded in length: this ends up in a text column and in log lines.
 */
export function redactPersonalData(text: string, values: PersonalValues = {}): string {
  let safe = text;
  // Longest first: a body often contains the subject or the address, and removing those first
  // would leave the rest of the body unmatched.
  const verbatim = [values.recipientAddress, values.subject, values.body]
    .filter((value): value is string => !!value && value.length >= MIN_VERBATIM_LENGTH)
    .sort((a, b) => b.length - a.length);
  for (const value of verbatim) safe = safe.split(value).join(REDACTED);
  safe = safe.replace(EMAIL, REDACTED).replace(LONG_NUMBER, REDACTED);
  // PostgreSQL text cannot hold NUL: one in a provider's error text would fail the row's UPDATE,
  // roll the attempt back and have the row sent again every cycle.
  safe = safe.split(NUL).join(REPLACEMENT_CHARACTER);
  return safe.length > MAX_STORED_LENGTH ? `${safe.slice(0, MAX_STORED_LENGTH)}…` : safe;
}
