import { randomInt } from 'node:crypto';

/** What a notification holds that must never leave the database: logs, metrics and spans stay free of it. */
export interface PersonalValues {
  readonly recipientAddress: string;
  readonly subject: string;
  readonly body: string;
}

/** What the recipient address looks like: an e-mail address, a phone number or a push device token. */
export type AddressKind = 'email' | 'phone' | 'push-token';

export interface PersonalValuesShape {
  /**
   * A body with a line break and double quotes, which JSON escaping changes
   * (`\n`, `\"`): a search of the raw text no longer finds such a body once it
   * has been JSON-encoded, so only a scanner that unescapes does. Default
   * false: plain ASCII, as `leakedValues` expects.
   */
  readonly escapableBody?: boolean;
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
 * The wording every value below shares with every other, whoever it is for:
 * the templates' fixed text, which names no one. A scanner looking for runs of
 * the seeded values may leave runs that lie wholly inside these out (they also
 * occur in ordinary text: "canceling statement due to statement timeout").
 */
export const SHARED_WORDING: readonly string[] = [
  '@mail-',
  '.example.net',
  '+44 7700 9',
  ' ext ',
  'fcm_',
  ' Private statement for ',
  'Dear ',
  ', your one-time code is ',
  ',\nyour one-time code is "',
  'QX',
  ' and your balance is 1234.56 EUR',
  '" and your balance is 1234.56 EUR',
];

/** Marker letters shifted by the row number: a second distinctive run, so either half of a token names the row. */
function tokenTail(marker: string, n: number): string {
  return Array.from(
    marker,
    (c, i) => MARKER_LETTERS[(MARKER_LETTERS.indexOf(c) + n + i + 1) % MARKER_LETTERS.length],
  ).join('');
}

/**
 * Realistic-looking personal values, each containing `marker`, so that any
 * leak, whole or partial, shows up as the marker in captured output. Plain
 * ASCII without quotes or backslashes (unless `escapableBody`): JSON escaping
 * cannot hide a leak from a search of the raw text. A push token is shaped as
 * an identifier (letters, digits, `_`), as real ones are.
 */
export function personalValues(
  marker: string,
  n: number,
  kind: AddressKind = 'email',
  shape: PersonalValuesShape = {},
): PersonalValues {
  const [first, last] = PEOPLE[n % PEOPLE.length];
  const recipientAddress =
    kind === 'email'
      ? `${marker}.${first.toLowerCase()}.${last.toLowerCase()}${n}@mail-${n}.example.net`
      : kind === 'phone'
        ? `+44 7700 9${String(n).padStart(5, '0')} ext ${marker}${n}`
        : `fcm_${marker}_${n}_${tokenTail(marker, n)}`;
  return {
    recipientAddress,
    subject: `${marker} Private statement for ${first} ${last} (${n})`,
    body: shape.escapableBody
      ? `Dear ${first},\nyour one-time code is "${n}QX${marker}" and your balance is 1234.56 EUR`
      : `Dear ${first}, your one-time code is ${n}QX${marker} and your balance is 1234.56 EUR`,
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
