/** Shorter pieces are left alone: they would match ordinary words and ids by chance. */
export const PERSONAL_RUN_LENGTH = 8;
const MAX_DECODING_ROUNDS = 4;

const PERCENT_RUN = /(?:%[0-9a-fA-F]{2})+/g;
const JSON_ESCAPE = /\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))/g;
const JSON_SIMPLE: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};
const HTML_ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]+));/g;
const HTML_NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  commat: '@',
  plus: '+',
  period: '.',
};

function percentDecoded(text: string): string {
  return text.replace(PERCENT_RUN, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

function jsonUnescaped(text: string): string {
  return text.replace(JSON_ESCAPE, (_all, hex: string | undefined, simple: string | undefined) =>
    hex === undefined ? JSON_SIMPLE[simple!] : String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

function htmlDecoded(text: string): string {
  return text.replace(
    HTML_ENTITY,
    (all, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
      if (name !== undefined) return HTML_NAMED[name.toLowerCase()] ?? all;
      const codePoint = Number.parseInt(dec ?? hex!, dec === undefined ? 16 : 10);
      return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : all;
    },
  );
}

/** `text` as stored, and as each decoding (and chain of decodings) a provider may have applied would read it. */
function readings(text: string): string[] {
  const seen = new Set([text, text.replaceAll('+', ' ')]);
  let frontier = [...seen];
  for (let round = 0; round < MAX_DECODING_ROUNDS && frontier.length > 0; round++) {
    const next: string[] = [];
    for (const reading of frontier) {
      for (const decode of [percentDecoded, jsonUnescaped, htmlDecoded]) {
        for (const decoded of [decode(reading), decode(reading).replaceAll('+', ' ')]) {
          if (!seen.has(decoded)) {
            seen.add(decoded);
            next.push(decoded);
          }
        }
      }
    }
    frontier = next;
  }
  return [...seen];
}

const folded = (text: string): string => text.toLowerCase().replace(/\s/g, ' ');

/**
 * Every run of `PERSONAL_RUN_LENGTH` characters of a personal value that
 * `text` holds, ignoring case and whitespace differences, read as stored and
 * after URL, JSON and HTML decoding (repeated: a provider may encode twice).
 * Shorter values count only when whole. Empty when nothing leaked.
 */
export function personalRunsIn(text: string, values: readonly string[]): string[] {
  const haystacks = readings(text).map(folded);
  const found = new Set<string>();
  for (const value of values) {
    const needle = folded(value);
    const runs =
      needle.length < PERSONAL_RUN_LENGTH
        ? [needle]
        : Array.from({ length: needle.length - PERSONAL_RUN_LENGTH + 1 }, (_, i) =>
            needle.slice(i, i + PERSONAL_RUN_LENGTH),
          );
    for (const run of runs) {
      if (run.trim() !== '' && haystacks.some((haystack) => haystack.includes(run))) found.add(run);
    }
  }
  return [...found];
}
