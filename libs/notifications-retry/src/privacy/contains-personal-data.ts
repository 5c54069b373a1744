import { decodeEchoedText } from './decode-echoed-text';
import { hasPersonalData, type PersonalDataRules } from './personal-data-marks';
import type { PersonalValues } from './personal-values';
import { MAX_SCANNED_ERROR_LENGTH } from './redact-personal-data';

/**
 * Whether a short string meant to be stored as it is (an error code, a
 * provider message id) holds personal data by the rules `redactPersonalData`
 * applies to texts: the row's values in any run of 8 characters or whole, in
 * any case, also URL-, JSON- or HTML-encoded, and (unless `shapes` is false)
 * anything shaped like an e-mail address or a phone number. Such a string is
 * replaced, not redacted: a code or id with a hole in it is no longer one.
 */
export function containsPersonalData(
  text: string,
  values: PersonalValues,
  rules: PersonalDataRules = { shapes: true },
): boolean {
  const decoded = decodeEchoedText(text.slice(0, MAX_SCANNED_ERROR_LENGTH));
  return hasPersonalData(decoded, values, rules);
}
