import type { PersonalValues } from '../support/personal-data';

/** The shortest run of a seeded value that counts as a leak. */
export const MIN_RUN = 8;

export type PersonalField = 'recipient_address' | 'subject' | 'body';
const FIELDS: readonly PersonalField[] = ['recipient_address', 'subject', 'body'];

/** A run of seeded personal data found in a text. */
export interface NeedleHit {
  /** Which decoding of the text showed it: `raw`, `url-decoded`, `json-unescaped`, or a chain. */
  readonly form: string;
  /** The longest run found, in characters (at least MIN_RUN), as it reads after decoding. */
  readonly run: string;
  readonly field: PersonalField | 'mixed';
  /** Up to 40 characters either side of the run, lower-cased, for telling what wrote it. */
  readonly excerpt: string;
  /** The seeded row it belongs to, when only one row has that run (names are shared by many). */
  readonly rowId: string | null;
}

export interface SeededPersonalValues extends PersonalValues {
  readonly id: string;
}

// Origins: ≥ 0 is row * 3 + field; -1 - field is a field shared by several rows; MIXED several fields.
const MIXED = -4;
const HASH_BASE = 0x01000193;
// Bound once: a global looked up per character is many times slower inside jest's vm context.
const imul = Math.imul;
const HASH_MASK = 0x3fffffff;
// HASH_BASE ** (MIN_RUN - 1), wrapped to 32 bits: the weight of the character leaving the window.
const BASE_POW = Array.from({ length: MIN_RUN - 1 }).reduce<number>((p) => imul(p, HASH_BASE), 1);

function hashAt(text: string, start: number): number {
  let h = 0;
  for (let i = start; i < start + MIN_RUN; i++) h = (imul(h, HASH_BASE) + text.charCodeAt(i)) | 0;
  return h;
}

function grams(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + MIN_RUN <= text.length; i++) out.push(text.slice(i, i + MIN_RUN));
  return out;
}

/** One step of decoding: JSON string escapes (`\"`, `\n`, `\u0040`, …). */
export function jsonUnescape(text: string): string {
  return text.replace(/\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))/g, (_, hex: string, c: string) => {
    if (hex) return String.fromCharCode(parseInt(hex, 16));
    return ({ b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' } as Record<string, string>)[c] ?? c;
  });
}

/** One step of decoding: percent-encoding as `encodeURIComponent` writes it (`+` stays `+`). */
export function urlDecode(text: string): string {
  return text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) =>
        String.fromCharCode(parseInt(hex, 16)),
      );
    }
  });
}

const DECODERS: ReadonlyArray<
  readonly [string, (text: string) => boolean, (text: string) => string]
> = [
  ['json-unescaped', (t) => t.includes('\\'), jsonUnescape],
  ['url-decoded', (t) => t.includes('%'), urlDecode],
];
const MAX_DECODING_STEPS = 4;

/** The text and every distinct text that up to four steps of JSON-unescaping and URL-decoding make of it. */
export function decodedForms(text: string): Array<{ form: string; text: string }> {
  const forms = [{ form: 'raw', text }];
  const seen = new Set([text]);
  for (let i = 0; i < forms.length; i++) {
    const { form, text: current } = forms[i];
    if (form.split('+').length > MAX_DECODING_STEPS) continue;
    for (const [name, applies, decode] of DECODERS) {
      if (!applies(current)) continue;
      const next = decode(current);
      if (seen.has(next)) continue;
      seen.add(next);
      forms.push({ form: form === 'raw' ? name : `${form}+${name}`, text: next });
    }
  }
  return forms;
}

/**
 * Every run of MIN_RUN characters of every seeded address, subject and body,
 * lower-cased, to be searched for in any text, case-insensitively, after
 * URL-decoding and JSON-unescaping it. Runs that lie wholly inside the
 * templates' shared wording (`sharedWording`: "Private statement for", "your
 * one-time code is") are left out: every row has them, they name no one, and
 * ordinary text has them too. A rolling hash over the text makes a search one
 * pass, with a Set lookup per position; only a hash hit builds a string.
 */
export class PersonalDataNeedles {
  private readonly origins = new Map<string, number>();
  private readonly hashes = new Set<number>();

  constructor(
    private readonly values: readonly SeededPersonalValues[],
    sharedWording: readonly string[],
  ) {
    const shared = new Set(sharedWording.flatMap((w) => grams(w.toLowerCase())));
    values.forEach((row, r) => {
      FIELDS.forEach((field, f) => {
        const value = field === 'recipient_address' ? row.recipientAddress : row[field];
        for (const gram of grams(value.toLowerCase())) {
          if (shared.has(gram)) continue;
          const origin = r * 3 + f;
          const known = this.origins.get(gram);
          if (known === undefined) {
            this.origins.set(gram, origin);
            this.hashes.add(hashAt(gram, 0) & HASH_MASK);
          } else if (known !== origin) {
            const knownField = known >= 0 ? known % 3 : known === MIXED ? -1 : -1 - known;
            this.origins.set(gram, knownField === f ? -1 - f : MIXED);
          }
        }
      });
    });
  }

  /** How many distinct runs are searched for. */
  get size(): number {
    return this.origins.size;
  }

  /** The first run found in `text` or in any of its decoded forms, or null. */
  find(text: string): NeedleHit | null {
    if (text.length < MIN_RUN) return null;
    for (const { form, text: decoded } of decodedForms(text)) {
      const hit = this.findIn(decoded.toLowerCase());
      if (hit) return { form, ...hit };
    }
    return null;
  }

  private findIn(text: string): Omit<NeedleHit, 'form'> | null {
    if (text.length < MIN_RUN) return null;
    let h = hashAt(text, 0);
    let best: { start: number; end: number; origin: number } | null = null;
    let run: { start: number; end: number; origin: number } | null = null;
    for (let i = 0; ; i++) {
      const origin = this.hashes.has(h & HASH_MASK)
        ? this.origins.get(text.slice(i, i + MIN_RUN))
        : undefined;
      if (origin !== undefined) {
        if (run && run.end >= i + MIN_RUN - 1) {
          run.end = i + MIN_RUN;
          if (origin >= 0) run.origin = origin;
        } else {
          run = { start: i, end: i + MIN_RUN, origin };
        }
        if (!best || run.end - run.start > best.end - best.start) best = { ...run };
      }
      if (i + MIN_RUN >= text.length) break;
      h =
        (imul((h - imul(text.charCodeAt(i), BASE_POW)) | 0, HASH_BASE) +
          text.charCodeAt(i + MIN_RUN)) |
        0;
    }
    if (!best) return null;
    return {
      run: text.slice(best.start, best.end),
      excerpt: text.slice(Math.max(0, best.start - 40), best.end + 40),
      field:
        best.origin >= 0
          ? FIELDS[best.origin % 3]
          : best.origin === MIXED
            ? 'mixed'
            : FIELDS[-1 - best.origin],
      rowId: best.origin >= 0 ? this.values[Math.floor(best.origin / 3)].id : null,
    };
  }
}
