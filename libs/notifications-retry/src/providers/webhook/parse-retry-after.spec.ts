import { parseRetryAfterMs } from './parse-retry-after';

const NOW = Date.UTC(2026, 2, 14, 12, 0, 0); // Sat, 14 Mar 2026 12:00:00 GMT

describe('parseRetryAfterMs', () => {
  describe('delta-seconds', () => {
    it.each([
      ['0', 0],
      ['1', 1_000],
      ['120', 120_000],
      [' 30 ', 30_000],
      ['86400', 86_400_000],
    ])('%p → %p ms', (header, expected) => {
      expect(parseRetryAfterMs(header, NOW)).toBe(expected);
    });

    it('is null when now + the delay is past the last date JavaScript can represent', () => {
      expect(parseRetryAfterMs('99999999999999999999', NOW)).toBeNull();
      expect(parseRetryAfterMs('8640000000000', NOW)).toBeNull();
      expect(parseRetryAfterMs('8640000000000', 0)).toBe(8.64e15);
    });
  });

  describe('HTTP-date', () => {
    it('IMF-fixdate: the time until then', () => {
      expect(parseRetryAfterMs('Sat, 14 Mar 2026 12:01:30 GMT', NOW)).toBe(90_000);
    });

    it('RFC 850 date: the time until then', () => {
      expect(parseRetryAfterMs('Saturday, 14-Mar-26 12:00:45 GMT', NOW)).toBe(45_000);
    });

    it('RFC 850 date: a two-digit year more than 50 years ahead is read as the past century', () => {
      // 2094 would be 68 years ahead, so it is 1994: long past, retry now.
      expect(parseRetryAfterMs('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBe(0);
    });

    it('RFC 850 date: a two-digit year exactly 50 years ahead is still ahead', () => {
      expect(parseRetryAfterMs('Saturday, 14-Mar-76 12:00:00 GMT', NOW)).toBe(
        Date.UTC(2076, 2, 14, 12) - NOW,
      );
    });

    it('asctime date, read as UTC (not local time)', () => {
      expect(parseRetryAfterMs('Sat Mar 14 12:02:00 2026', NOW)).toBe(120_000);
      expect(parseRetryAfterMs('Sun Mar  1 12:00:00 2026', NOW - 13 * 86_400_000 - 60_000)).toBe(
        60_000,
      );
    });

    it('a date in the past means retry now', () => {
      expect(parseRetryAfterMs('Fri, 13 Mar 2026 12:00:00 GMT', NOW)).toBe(0);
    });

    it('is the same whatever the case of the day and month names, in all three forms', () => {
      expect(parseRetryAfterMs('sat, 14 MAR 2026 12:00:10 GMT', NOW)).toBe(10_000);
      expect(parseRetryAfterMs('SATURDAY, 14-mar-26 12:00:45 gmt', NOW)).toBe(45_000);
      expect(parseRetryAfterMs('SAT mar 14 12:02:00 2026', NOW)).toBe(120_000);
    });

    it.each(Array.from({ length: 12 }, (_, month) => month))(
      'reads every month name (month %p), as Date#toUTCString writes it',
      (month) => {
        const at = Date.UTC(2027, month, 15, 8, 30);
        expect(parseRetryAfterMs(new Date(at).toUTCString(), NOW)).toBe(at - NOW);
      },
    );

    it('takes the last second of the day, and a leap second', () => {
      const endOfDay = Date.UTC(2026, 2, 14, 23, 59, 59);
      expect(parseRetryAfterMs('Sat, 14 Mar 2026 23:59:59 GMT', NOW)).toBe(endOfDay - NOW);
      expect(parseRetryAfterMs('Sat, 14 Mar 2026 23:59:60 GMT', NOW)).toBe(endOfDay + 1_000 - NOW);
    });

    it('rounds nothing: the date has second precision, the result is exact', () => {
      expect(parseRetryAfterMs('Sat, 14 Mar 2026 12:00:01 GMT', NOW + 250)).toBe(750);
    });
  });

  describe('absent or unusable', () => {
    it.each([
      [null],
      [undefined],
      [''],
      ['   '],
      ['soon'],
      ['-5'],
      ['1.5'],
      ['30s'],
      ['2026-03-14T12:01:00Z'],
      ['Sat, 14 Mar 2026 12:01:00'],
      ['Sat, 31 Feb 2026 12:00:00 GMT'],
      ['Sat, 14 Mar 2026 25:00:00 GMT'],
      ['Sat, 14 Mar 2026 12:61:00 GMT'],
      ['Sat, 14 Mar 2026 12:00:61 GMT'],
      ['Sat, 14 Mar 2026 24:00:00 GMT'],
      ['Sat, 14 Mar 2026 12:60:00 GMT'],
      ['Sat, 14 Foo 2026 12:00:00 GMT'],
    ])('%p → null', (header) => {
      expect(parseRetryAfterMs(header, NOW)).toBeNull();
    });
  });
});
