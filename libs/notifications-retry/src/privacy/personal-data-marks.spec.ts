import { needsSpaceFolding, personalDataMarks, sharesPersonalValues } from './personal-data-marks';
import type { PersonalValues } from './personal-values';

/** `text` with each character marked as personal data shown as `#`: positions must be exact. */
function marked(text: string, values: PersonalValues, shapes = true): string {
  const marks = personalDataMarks(text, values, { shapes });
  return Array.from(text, (char, at) => (marks[at] === 1 ? '#' : char)).join('');
}

const hashes = (text: string): string => '#'.repeat(text.length);

describe('personalDataMarks', () => {
  describe("the row's values", () => {
    it('marks a value at the very start of the text, from its first character', () => {
      expect(marked('secretvalue123 rejected', { subject: 'secretvalue123' })).toBe(
        `${hashes('secretvalue123')} rejected`,
      );
    });

    it('marks a value whole from 4 characters, not a shorter one', () => {
      expect(marked('Dear ANNA, hi', { subject: 'Anna' })).toBe('Dear ####, hi');
      expect(marked('Dear ANN, hi', { subject: 'Ann' })).toBe('Dear ANN, hi');
    });

    it('marks a value echoed decoded when it was stored encoded', () => {
      // The row holds `Tom%20Jones`; the provider echoes (and the text is decoded to) `Tom Jones`.
      expect(marked('unknown Tom Jones', { recipientAddress: 'Tom%20Jones' }, false)).toBe(
        'unknown #########',
      );
    });

    it('marks every run of the text however often the value repeats one of them', () => {
      // The value repeats the text's first run 23 times before the rest: a run found must be
      // counted once, or the scan stops before it reaches the others.
      const body = `${'a'.repeat(30)}Xsecretvalue`;
      expect(marked('aaaaaaaaXsecretvalue', { body }, false)).toBe(hashes('aaaaaaaaXsecretvalue'));
    });

    it('folds a whole upper-cased text, so that a Greek final sigma matches', () => {
      expect(marked('ΟΔΟΣ ΑΘΗΝΩΝ 12', { recipientAddress: 'Οδος Αθηνων 12' }, false)).toBe(
        hashes('ΟΔΟΣ ΑΘΗΝΩΝ 12'),
      );
    });

    it('keeps positions where a character lower-cases to two (İ)', () => {
      expect(marked('İİ SECRETVALUE123', { subject: 'secretvalue123' })).toBe(
        `İİ ${hashes('SECRETVALUE123')}`,
      );
      expect(marked('İZMİR secretvalue123', { subject: 'Secretvalue123' })).toBe(
        `İZMİR ${hashes('secretvalue123')}`,
      );
    });

    it('matches a value holding ß (which upper-cases to two) against a text without one', () => {
      expect(marked('unknown Allee 17 Köln', { recipientAddress: 'Große Allee 17 Köln' })).toBe(
        `unknown${hashes(' Allee 17 Köln')}`,
      );
    });
  });

  // Runs are found by a rolling hash: two different runs with one hash must still be told apart.
  describe('runs whose hashes collide', () => {
    const [a, b] = ['yaqq4q8x', 'ifbm2l07'];

    it('marks only the run the value holds', () => {
      expect(marked(`${a}|${b}`, { subject: `${a}.` })).toBe(`########|${b}`);
      expect(marked(`${a}|${b}`, { subject: `${b}.` })).toBe(`${a}|########`);
    });

    it('marks both when the value holds both', () => {
      expect(marked(`${a}|${b}`, { subject: `${a}.${b}` })).toBe('########|########');
    });

    it("marks nothing when the value holds only the other one (the text's hash, not its run)", () => {
      expect(marked(`code ${a}`, { subject: `${b} note` })).toBe(`code ${a}`);
    });
  });

  describe("the notification's id", () => {
    const id = '6f1d2c3b-8a7e-4c0d-9b5a-1e2f3a4b5c6d';

    it('is kept, and what follows it is marked at its own positions', () => {
      const values: PersonalValues = { subject: 'secretvalue123', id };
      expect(marked(`${id}:secretvalue123 end`, values)).toBe(
        `${id}:${hashes('secretvalue123')} end`,
      );
      expect(marked(`ref ${id}:secretvalue123 end`, values)).toBe(
        `ref ${id}:${hashes('secretvalue123')} end`,
      );
    });

    it('is kept even where it has the shape of a phone number', () => {
      const numericId = '1718000000123456';
      expect(marked(`dup ${numericId} to +44 7700 900123`, { id: numericId })).toBe(
        `dup ${numericId} to ${hashes('+44 7700 900123')}`,
      );
    });

    it('is kept from 8 characters; a shorter one is not protected', () => {
      const address: PersonalValues = { recipientAddress: 'person-6f1d2c3b@x.test' };
      expect(marked('msg-6f1d2c3b', { ...address, id: '6f1d2c3b' }, false)).toBe('msg-6f1d2c3b');
      expect(marked('to abc12-secret-x', { recipientAddress: 'abc12-secret-x', id: 'abc12' })).toBe(
        `to ${hashes('abc12-secret-x')}`,
      );
    });
  });

  describe('e-mail addresses by shape', () => {
    it('marks one at the start and one at the end of the text', () => {
      expect(marked('bob@example.com bounced', {})).toBe(`${hashes('bob@example.com')} bounced`);
      expect(marked('bounced: bob@example.com', {})).toBe(`bounced: ${hashes('bob@example.com')}`);
    });

    it.each([
      ['no dot in the domain', 'user@localhost'],
      ['a dot elsewhere in the text only', 'v1.2 said user@localhost'],
      ['the dot last', 'user@example.'],
      ['the dot first', 'user@.com'],
      ['no local part', 'see @example.com'],
    ])('does not mark one with %s', (_label, text) => {
      expect(marked(text, {})).toBe(text);
    });
  });
});

describe('sharesPersonalValues', () => {
  const values: PersonalValues = {
    id: '6f1d2c3b-0000-4000-8000-00000000abcd',
    recipientAddress: 'Person-6F1D2C3B@Example.com',
    subject: 'Your monthly statement',
    body: 'Hello Anna,\tyour statement for account 77123 is ready: https://x.test/s?id=6f1d2c3b-0000-4000-8000-00000000abcd',
  };

  it('agrees with personalDataMarks on texts cut from the values, the id and noise', () => {
    // A fixed-seed generator: the same 3,000 texts every run.
    let seed = 12345;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const sources = [
      values.id!,
      values.recipientAddress!,
      values.subject!,
      values.body!,
      'msg-',
      '@provider.example',
      'xyzzy 0123',
    ];
    const variants = [
      (t: string) => t,
      (t: string) => t.toUpperCase(),
      (t: string) => t.replaceAll(' ', '+'),
      (t: string) => t.replaceAll(' ', '\n'),
    ];
    const answers = new Set<boolean>();
    for (let i = 0; i < 3_000; i++) {
      let text = '';
      for (let piece = 0, pieces = 1 + next(3); piece < pieces; piece++) {
        const source = sources[next(sources.length)];
        const from = next(source.length);
        text += variants[next(variants.length)](source.slice(from, from + 1 + next(14)));
      }
      const expected = personalDataMarks(text, values, { shapes: false }).includes(1);
      expect({ text, shares: sharesPersonalValues(text, values) }).toEqual({
        text,
        shares: expected,
      });
      answers.add(expected);
    }
    expect([...answers].sort()).toEqual([false, true]);
  });

  it("finds a run of the address in a provider's id, and not the notification's own id", () => {
    expect(sharesPersonalValues('sg.person-6f1d2c3b@example', values)).toBe(true);
    expect(sharesPersonalValues(`bench-${values.id}`, values)).toBe(false);
  });

  it('finds a value shorter than a run whole', () => {
    expect(sharesPersonalValues('to ANNA ok', { subject: 'Anna' })).toBe(true);
    expect(sharesPersonalValues('to ANN ok', { subject: 'Anna' })).toBe(false);
  });

  it('searches a text longer than a message id as personalDataMarks does', () => {
    const long = `${'q'.repeat(200)} monthly statement`;
    expect(sharesPersonalValues(long, values)).toBe(true);
    expect(sharesPersonalValues('q'.repeat(200), values)).toBe(false);
  });
});

describe('needsSpaceFolding', () => {
  it('says yes for exactly the characters `\\s` matches but the space, and `+`', () => {
    const differing: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      const char = String.fromCharCode(code);
      const expected = (/\s/.test(char) && char !== ' ') || char === '+';
      if (needsSpaceFolding(`ab${char}cd`) !== expected) differing.push(code.toString(16));
    }
    expect(differing).toEqual([]);
  });

  it('says no for a text of letters and spaces, and for an empty one', () => {
    expect(needsSpaceFolding('Your monthly statement is ready')).toBe(false);
    expect(needsSpaceFolding('')).toBe(false);
  });
});
