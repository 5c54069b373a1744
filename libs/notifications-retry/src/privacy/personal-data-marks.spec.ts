import { personalDataMarks } from './personal-data-marks';
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
