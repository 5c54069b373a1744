import { randomInt } from 'node:crypto';

/** What a notification holds that must never leave the database: logs, metrics and spans stay free of it. */
export interface PersonalValues {
  readonly recipientAddress: string;
  readonly subject: string;
  readonly body: string;
}

// Letters outside 0-9a-f: a marker that no UUID, run id or hex id can contain by chance.
const MARKER_LETTERS = 'ghijkmnpqrstuvwxyz';

/** A random marker of letters g-z, embedded in every personal value of a test file. */
export function personalMarker(length = 10): string {
  return Array.from({ length }, () => MARKER_LETTERS[randomInt(MARKER_LETTERS.length)]).join('');
}

const PEOPLE = [
  ['Amelie', 'Durand'],
  ['Jonas', 'Kowalski'],
  ['Priya', 'Raman'],
  ['Tomasz', 'Nowak'],
  ['Chloe', 'Martinez'],
  ['Mateo', 'Silvestri'],
] as const;

/** Pieces of the values that nothing else in a log, scrape or span would contain; matched ignoring case. */
const FRAGMENTS = [...PEOPLE.flat(), '7700 9', 'one-time code', 'Private statement'];

/**
 * Realistic-looking personal values, each containing `marker`, so that any
 * leak, whole or partial, shows up as the marker in captured output. Plain
 * ASCII without quotes or backslashes: JSON escaping cannot hide a leak from
 * a search of the raw text.
 */
export function personalValues(
  marker: string,
  n: number,
  kind: 'email' | 'phone' = 'email',
): PersonalValues {
  const [first, last] = PEOPLE[n % PEOPLE.length];
  const recipientAddress =
    kind === 'email'
      ? `${marker}.${first.toLowerCase()}.${last.toLowerCase()}${n}@mail-${n}.example.net`
      : `+44 7700 9${String(n).padStart(5, '0')} ext ${marker}${n}`;
  return {
    recipientAddress,
    subject: `${marker} Private statement for ${first} ${last} (${n})`,
    body: `Dear ${first}, your one-time code is ${n}QX${marker} and your balance is 1234.56 EUR`,
  };
}

/**
 * Every seeded value, the marker and any name or other fragment of them that
 * `text` contains: a whole value, a prefix or a slice. Empty when nothing leaked.
 */
export function leakedValues(
  text: string,
  marker: string,
  values: readonly PersonalValues[],
): string[] {
  const found = new Set<string>();
  if (text.includes(marker)) found.add(marker);
  const lower = text.toLowerCase();
  for (const fragment of FRAGMENTS) if (lower.includes(fragment.toLowerCase())) found.add(fragment);
  for (const value of values) {
    for (const field of [value.recipientAddress, value.subject, value.body]) {
      if (text.includes(field)) found.add(field);
    }
  }
  return [...found];
}
