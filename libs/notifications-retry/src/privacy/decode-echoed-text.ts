// Each round undoes one layer; a provider that JSON-encodes a URL-encoded form twice needs three.
// Bounded so that a crafted text cannot keep the loop going.
const MAX_DECODING_ROUNDS = 5;

const PERCENT_RUN = /(?:%[0-9a-fA-F]{2})+/g;
const PERCENT_BYTE = /%([0-9a-fA-F]{2})/g;
// \b and \f are left alone: nobody's data hides behind a backspace, and decoding them would turn
// a Windows path (C:\build) into control characters in the stored text.
const JSON_ESCAPE = /\\(?:u([0-9a-fA-F]{4})|(["\\/nrt]))/g;
const JSON_SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  n: '\n',
  r: '\r',
  t: '\t',
};
// Digits bounded: a reference of a hundred zeros is not a character.
const HTML_ENTITY = /&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z]{2,8}));/g;
const HTML_NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00A0',
  commat: '@',
  plus: '+',
  period: '.',
  sol: '/',
  percnt: '%',
};
const MAX_CODE_POINT = 0x10ffff;

/**
 * `text` with the encodings a provider may have applied to what it echoes
 * undone, repeatedly until nothing changes: percent-encoding, JSON string
 * escapes and HTML character references. Linear in the length of `text` per
 * round. `+` for a space is not decoded here (a `+` is as often a `+`): the
 * matching treats the two alike instead.
 */
export function decodeEchoedText(text: string): string {
  let current = text;
  for (let round = 0; round < MAX_DECODING_ROUNDS; round++) {
    const next = decodeHtmlEntities(decodePercentEncoding(unescapeJson(current)));
    if (next === current) break;
    current = next;
  }
  return current;
}

function unescapeJson(text: string): string {
  if (!text.includes('\\')) return text;
  return text.replace(
    JSON_ESCAPE,
    (_escape, hex: string | undefined, simple: string | undefined) =>
      hex === undefined
        ? JSON_SIMPLE_ESCAPES[simple!]
        : String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

function decodePercentEncoding(text: string): string {
  if (!text.includes('%')) return text;
  return text.replace(PERCENT_RUN, (run) => {
    const bytes = Buffer.from(
      Array.from(run.matchAll(PERCENT_BYTE), (match) => Number.parseInt(match[1], 16)),
    );
    // Invalid UTF-8 becomes U+FFFD instead of throwing as decodeURIComponent would.
    return bytes.toString('utf8');
  });
}

function decodeHtmlEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(
    HTML_ENTITY,
    (entity, decimal: string | undefined, hex: string | undefined, name: string | undefined) => {
      if (name !== undefined) return HTML_NAMED_ENTITIES[name.toLowerCase()] ?? entity;
      const codePoint =
        decimal === undefined ? Number.parseInt(hex!, 16) : Number.parseInt(decimal, 10);
      return codePoint <= MAX_CODE_POINT ? String.fromCodePoint(codePoint) : entity;
    },
  );
}
