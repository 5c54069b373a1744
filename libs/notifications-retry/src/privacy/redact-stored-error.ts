import { containsPersonalData } from './contains-personal-data';
import type { PersonalValues } from './personal-values';
import { redactPersonalData } from './redact-personal-data';

const REDACTED_CODE = '[redacted]';
/** Codes go to last_error_code, events, alerts and metric labels: short identifiers only. */
const PLAIN_ERROR_CODE = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * Whether an error code may be stored or shown as it is: a plain identifier
 * free of the row's personal data (an address, a push token or a phone number
 * is a plain identifier too, and adapters do pass them as codes).
 */
export function isPlainErrorCode(code: string, values: PersonalValues = {}): boolean {
  return PLAIN_ERROR_CODE.test(code) && !containsPersonalData(code, values);
}

/**
 * A row's stored error as an operator surface may show it (the page, the JSON
 * API, the CLI). The worker redacts what it stores, but other writers of the
 * row (the dispatcher's first attempt, an operator's script) may not: every
 * text is redacted again on the way out, against the row's own values.
 */
export function redactStoredError(
  stored: { readonly code: string | null; readonly message: string | null },
  values: PersonalValues,
): { code: string | null; message: string | null } {
  return {
    code: stored.code === null ? null : redactStoredCode(stored.code, values),
    message: stored.message === null ? null : redactPersonalData(stored.message, values),
  };
}

/**
 * A stored error code, whole when it is a plain identifier free of personal
 * data, replaced otherwise (a code with a hole in it is no longer one). Without
 * the row's values (a count by code), only the shapes of addresses and phone
 * numbers are looked for.
 */
export function redactStoredCode(code: string, values: PersonalValues = {}): string {
  return isPlainErrorCode(code, values) ? code : REDACTED_CODE;
}
