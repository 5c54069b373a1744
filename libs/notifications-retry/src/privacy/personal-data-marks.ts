import { decodeEchoedText } from './decode-echoed-text';
import type { PersonalValues } from './personal-values';

/**
 * A run this long shared with the address, subject or body is theirs: long enough
 * that ordinary words rarely make one by chance, short enough to catch a prefix
 * ("the first 40 characters"), a suffix or half a token.
 */
export const PERSONAL_RUN_LENGTH = 8;
/** Values shorter than a run are searched for whole, from this length; shorter ones are words. */
export const MIN_WHOLE_VALUE_LENGTH = 4;

// Seven or more digits, optionally grouped (a `+` too: a form-encoded space): phone and card numbers.
const LONG_NUMBER = /\+?\d[\d\s().+-]{5,}\d/g;
// Not part of an e-mail address as written in prose, JSON or a URL: `to=bob@x.org&y` is the address only.
const NOT_IN_EMAIL = /[\s@"'<>(),;:=&?/\\[\]{}|]/;
const FOLDED_SPACE = /[\s+]/g;
// A noncharacter: stands in the folded text for the notification's id, which nothing may match.
const NEVER_MATCHES = '\uFFFF';

export interface PersonalDataRules {
  /**
   * Also anything shaped like an e-mail address or a phone number, whoever's it
   * is. Right for free text; wrong for provider message ids, which are often
   * long numbers or `<…@host>` Message-IDs.
   */
  readonly shapes: boolean;
}

/**
 * Which characters of `text` are personal data, 1 per such position. `text`
 * is expected decoded (`decodeEchoedText`). The row's values are found ignoring
 * case, treating any whitespace and `+` alike, in any run of
 * `PERSONAL_RUN_LENGTH` characters, as typed and decoded; a value shorter than a
 * run only whole. The notification's id is kept wherever it occurs whole.
 * Linear in the lengths of `text` and of the values.
 */
export function personalDataMarks(
  text: string,
  values: PersonalValues,
  rules: PersonalDataRules,
): Uint8Array {
  const marks = new Uint8Array(text.length);
  const folded = foldForMatching(text);
  const idSpans = spansOf(folded, values.id);
  const key = withIdMasked(folded, idSpans);
  let runs: TextRuns | undefined;
  for (const variant of valueVariants(values)) {
    if (variant.length < PERSONAL_RUN_LENGTH) {
      markEvery(key, variant, marks);
    } else {
      runs ??= new TextRuns(key);
      runs.markSharedWith(variant, marks);
    }
  }
  if (rules.shapes) {
    markEmailAddresses(text, marks);
    for (const match of text.matchAll(LONG_NUMBER)) {
      marks.fill(1, match.index, match.index + match[0].length);
    }
  }
  for (const [start, end] of idSpans) marks.fill(0, start, end);
  return marks;
}

/**
 * Whether `personalDataMarks(text, values, rules)` would mark anything: without
 * shapes, found by `sharesPersonalValues`, which builds no marks.
 */
export function hasPersonalData(
  text: string,
  values: PersonalValues,
  rules: PersonalDataRules,
): boolean {
  return rules.shapes
    ? personalDataMarks(text, values, rules).includes(1)
    : sharesPersonalValues(text, values);
}

/**
 * Whether `personalDataMarks(text, values, { shapes: false })` would mark
 * anything, found without building the marks or an index of the text's runs:
 * stops at the first value found. What a provider message id is checked with,
 * once per success.
 */
export function sharesPersonalValues(text: string, values: PersonalValues): boolean {
  // A long text is searched through its index of runs: comparing each hash of a value with all of
  // its own would cost a value's length times the text's.
  if (text.length > MAX_SHORT_TEXT_LENGTH)
    return personalDataMarks(text, values, NO_SHAPES).includes(1);
  const folded = foldForMatching(text);
  const key = withIdMasked(folded, spansOf(folded, values.id));
  let runs: RunHashes | undefined;
  for (const variant of valueVariants(values)) {
    if (variant.length < PERSONAL_RUN_LENGTH) {
      if (key.includes(variant)) return true;
    } else if (key.length >= PERSONAL_RUN_LENGTH) {
      runs ??= new RunHashes(key);
      if (runs.foundIn(variant)) return true;
    }
  }
  return false;
}

/**
 * The folded text with the notification's id masked where it occurs whole.
 * No run that reaches into the id can match: `msg-<id>` does not share
 * `-6f1d2c3` with an address `person-6f1d2c3b@…`.
 */
function withIdMasked(key: string, idSpans: ReadonlyArray<[number, number]>): string {
  if (idSpans.length === 0) return key;
  let masked = '';
  let from = 0;
  for (const [start, end] of idSpans) {
    masked += `${key.slice(from, start)}${NEVER_MATCHES.repeat(end - start)}`;
    from = end;
  }
  return `${masked}${key.slice(from)}`;
}

/** The row's values folded, each as typed and decoded (a body holding `a\"b` is echoed as either). */
function* valueVariants(values: PersonalValues): Generator<string> {
  for (const value of [values.recipientAddress, values.subject, values.body]) {
    if (typeof value !== 'string' || value.length < MIN_WHOLE_VALUE_LENGTH) continue;
    const decoded = decodeEchoedText(value);
    yield foldForMatching(value);
    if (decoded !== value) yield foldForMatching(decoded);
  }
}

/**
 * Lower case, one kind of space. One character for one, so that positions in
 * the folded text are positions in the text.
 */
function foldForMatching(text: string): string {
  const lower = text.toLowerCase();
  if (lower.length === text.length) return foldSpaces(lower);
  // A few characters (İ) lower-case to two: keep those as they are.
  let folded = '';
  for (const char of text) {
    const lowerChar = char.toLowerCase();
    folded += lowerChar.length === char.length ? lowerChar : char;
  }
  return foldSpaces(folded);
}

function foldSpaces(text: string): string {
  return needsSpaceFolding(text) ? text.replace(FOLDED_SPACE, ' ') : text;
}

/**
 * Whether folding changes `text`: it holds whitespace other than the space
 * itself (what `\s` matches), or `+`. Tested first, as most texts have none and
 * a replace would copy them all the same; by code, as the regular expression
 * `[^\S ]|\+` took a seventh of a message id's check.
 */
export function needsSpaceFolding(text: string): boolean {
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x2b || (code >= 0x09 && code <= 0x0d)) return true;
    if (code >= 0xa0 && isWideSpace(code)) return true;
  }
  return false;
}

/** The characters beyond Latin-1's first half that `\s` matches. */
function isWideSpace(code: number): boolean {
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** Where the notification's id occurs whole in the folded text. */
function spansOf(key: string, id: string | null | undefined): Array<[number, number]> {
  if (typeof id !== 'string' || id.length < PERSONAL_RUN_LENGTH) return [];
  const needle = foldForMatching(id);
  const spans: Array<[number, number]> = [];
  for (let at = key.indexOf(needle); at !== -1; at = key.indexOf(needle, at + needle.length)) {
    spans.push([at, at + needle.length]);
  }
  return spans;
}

function markEvery(key: string, needle: string, marks: Uint8Array): void {
  for (let at = key.indexOf(needle); at !== -1; at = key.indexOf(needle, at + 1)) {
    marks.fill(1, at, at + needle.length);
  }
}

// A polynomial hash of a run, rolled one character at a time along a value: a 100 KB body is
// then scanned without cutting 100,000 substrings out of it.
const HASH_BASE = 0x01000193;
const HASH_BASE_TO_LAST = Array.from({ length: PERSONAL_RUN_LENGTH - 1 }).reduce<number>(
  (power) => Math.imul(power, HASH_BASE),
  1,
);

// About eight slots per run of the text, so that few of a value's positions pass the filter.
const FILTER_SLOTS_PER_RUN = 8;
const MIN_FILTER_BITS = 6;
const MAX_FILTER_BITS = 16;

interface TextRun {
  readonly run: string;
  readonly positions: number[];
}

/** Texts up to this long (provider message ids) are searched by `RunHashes`. */
const MAX_SHORT_TEXT_LENGTH = 128;
const NO_SHAPES: PersonalDataRules = { shapes: false };
// 1,024 bits: a short text's runs set at most an eighth of them, so most positions of a value stop
// at the filter.
const RUN_FILTER_WORDS = 32;

/**
 * The hashes of a short text's runs, for a yes-or-no search of values for any
 * of them. Kept in buffers of the module (the filter cleared, the hashes
 * overwritten for each text), so only one may be in use at a time: a search
 * runs once per success and synchronously, and two typed arrays allocated per
 * search were a third of its time.
 */
class RunHashes {
  private static readonly hashes = new Int32Array(MAX_SHORT_TEXT_LENGTH);
  private static readonly filter = new Uint32Array(RUN_FILTER_WORDS);
  private readonly runs: number;

  constructor(private readonly key: string) {
    // The buffer would drop the runs past its end, and with them what they would find.
    if (key.length > MAX_SHORT_TEXT_LENGTH) throw new RangeError('not a short text');
    this.runs = key.length - PERSONAL_RUN_LENGTH + 1;
    const { hashes, filter } = RunHashes;
    filter.fill(0);
    someRun(key, (hash, start) => {
      hashes[start] = hash;
      const bit = filterBit(hash);
      filter[bit >>> 5] |= 1 << (bit & 31);
    });
  }

  /** Whether any run of the text occurs in `value`. */
  foundIn(value: string): boolean {
    const { hashes, filter } = RunHashes;
    return someRun(value, (hash, start) => {
      const bit = filterBit(hash);
      if ((filter[bit >>> 5] & (1 << (bit & 31))) === 0) return false;
      for (let run = 0; run < this.runs; run++) {
        if (hashes[run] === hash && this.sameRun(run, value, start)) return true;
      }
      return false;
    });
  }

  private sameRun(run: number, value: string, start: number): boolean {
    for (let i = 0; i < PERSONAL_RUN_LENGTH; i++) {
      if (this.key.charCodeAt(run + i) !== value.charCodeAt(start + i)) return false;
    }
    return true;
  }
}

function filterBit(hash: number): number {
  return (hash ^ (hash >>> 16)) & (RUN_FILTER_WORDS * 32 - 1);
}

/** The runs of the text not yet found in a value, by hash, each with where it starts. */
class TextRuns {
  private readonly byHash = new Map<number, TextRun[]>();
  /** Which hashes (folded to a few bits) the text has: most positions of a value stop here. */
  private readonly filter: Uint8Array;
  private readonly filterMask: number;
  private remaining = 0;

  constructor(key: string) {
    const bits = Math.min(
      MAX_FILTER_BITS,
      Math.max(MIN_FILTER_BITS, Math.ceil(Math.log2(key.length * FILTER_SLOTS_PER_RUN + 1))),
    );
    this.filter = new Uint8Array(1 << bits);
    this.filterMask = (1 << bits) - 1;
    someRun(key, (hash, start) => {
      const run = key.slice(start, start + PERSONAL_RUN_LENGTH);
      this.filter[this.slot(hash)] = 1;
      const bucket = this.byHash.get(hash);
      const entry = bucket?.find((candidate) => candidate.run === run);
      if (entry !== undefined) entry.positions.push(start);
      else if (bucket !== undefined) bucket.push({ run, positions: [start] });
      else this.byHash.set(hash, [{ run, positions: [start] }]);
      if (entry === undefined) this.remaining++;
    });
  }

  private slot(hash: number): number {
    return (hash ^ (hash >>> 16)) & this.filterMask;
  }

  /**
   * Marks every run of the text that also occurs in `value`. A run found is
   * forgotten, so that each position is marked once however often the value
   * repeats it: linear, even for a 100 KB body of one repeated letter.
   */
  markSharedWith(value: string, marks: Uint8Array): void {
    if (this.remaining === 0) return;
    someRun(value, (hash, start) => {
      if (this.filter[this.slot(hash)] === 0) return false;
      const bucket = this.byHash.get(hash);
      if (bucket === undefined) return false;
      const index = bucket.findIndex((candidate) => value.startsWith(candidate.run, start));
      if (index === -1) return false;
      for (const position of bucket[index].positions) {
        marks.fill(1, position, position + PERSONAL_RUN_LENGTH);
      }
      bucket.splice(index, 1);
      if (bucket.length === 0) this.byHash.delete(hash);
      this.remaining--;
      // Every run of the text found: the rest of the value can add nothing.
      return this.remaining === 0;
    });
  }
}

/**
 * Calls `visit` with the hash and the start of every run of `text`, in order,
 * until it returns true; says whether one did.
 */
function someRun(text: string, visit: (hash: number, start: number) => boolean | void): boolean {
  let hash = 0;
  for (let at = 0; at < text.length; at++) {
    hash = rollHash(
      hash,
      at >= PERSONAL_RUN_LENGTH ? text.charCodeAt(at - PERSONAL_RUN_LENGTH) : -1,
      text.charCodeAt(at),
    );
    if (at >= PERSONAL_RUN_LENGTH - 1 && visit(hash, at - PERSONAL_RUN_LENGTH + 1) === true) {
      return true;
    }
  }
  return false;
}

/** The hash of the run ending with `added`, from that of the run before it (`removed` is -1 while it fills). */
function rollHash(hash: number, removed: number, added: number): number {
  const without = removed === -1 ? hash : hash - Math.imul(removed, HASH_BASE_TO_LAST);
  return (Math.imul(without, HASH_BASE) + added) | 0;
}

/**
 * local@domain.tld, found from each `@` outwards rather than by a regular
 * expression: `[^@]+@` backtracks from every position of a long text without
 * one, which took 10 s for a 100 KB error text.
 */
function markEmailAddresses(text: string, marks: Uint8Array): void {
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && !NOT_IN_EMAIL.test(text[start - 1])) start--;
    let end = at + 1;
    while (end < text.length && !NOT_IN_EMAIL.test(text[end])) end++;
    // A dot in the domain with something on both sides, as `[^@]+\.[^@]+` required.
    const domain = text.slice(at + 1, end);
    const dot = domain.indexOf('.', 1);
    if (start < at && dot !== -1 && dot < domain.length - 1) marks.fill(1, start, end);
  }
}
