const DELTA_SECONDS = /^\d+$/;
const MAX_DATE_MS = 8.64e15;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
// The three HTTP-date forms of RFC 9110 §5.6.7, which recipients must all accept. Matching them
// exactly, instead of handing the text to Date.parse, keeps V8's guesswork out: Date.parse reads
// "1.5" as a date in 2001 and an asctime date as local time.
const IMF_FIXDATE = new RegExp(
  `^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`,
  'i',
);
const RFC_850_DATE = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`,
  'i',
);
const ASCTIME_DATE = new RegExp(
  `^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`,
  'i',
);

/**
 * How long a `Retry-After` header asks the client to wait, in milliseconds from
 * `nowMs`: delta-seconds (`120`) or an HTTP-date. A date in the past is 0 (retry
 * now). Null when the header is absent, not one of those forms or too far out
 * to be a date, so that the caller falls back to its own backoff instead of
 * acting on a guess.
 */
export function parseRetryAfterMs(value: string | null | undefined, nowMs: number): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (DELTA_SECONDS.test(text)) {
    const ms = Number(text) * 1000;
    // Beyond the last date JavaScript can represent, `new Date(now + ms)` is Invalid Date.
    return nowMs + ms <= MAX_DATE_MS ? ms : null;
  }
  const at = parseHttpDate(text, nowMs);
  return at === null ? null : Math.max(0, at - nowMs);
}

function parseHttpDate(text: string, nowMs: number): number | null {
  let match = IMF_FIXDATE.exec(text);
  if (match) {
    const [, day, month, year, hours, minutes, seconds] = match;
    return utc(Number(year), month, Number(day), hours, minutes, seconds);
  }
  match = RFC_850_DATE.exec(text);
  if (match) {
    const [, day, month, twoDigitYear, hours, minutes, seconds] = match;
    return utc(fullYear(Number(twoDigitYear), nowMs), month, Number(day), hours, minutes, seconds);
  }
  match = ASCTIME_DATE.exec(text);
  if (match) {
    const [, month, day, hours, minutes, seconds, year] = match;
    // A one-digit day comes space-padded (" 1"); Number ignores the space.
    return utc(Number(year), month, Number(day), hours, minutes, seconds);
  }
  return null;
}

/** RFC 9110: a two-digit year more than 50 years ahead is the most recent past year with those digits. */
function fullYear(twoDigitYear: number, nowMs: number): number {
  const currentYear = new Date(nowMs).getUTCFullYear();
  const candidate = Math.floor(currentYear / 100) * 100 + twoDigitYear;
  return candidate > currentYear + 50 ? candidate - 100 : candidate;
}

function utc(
  year: number,
  monthName: string,
  day: number,
  hoursText: string,
  minutesText: string,
  secondsText: string,
): number | null {
  const month = MONTHS.indexOf(monthName.toLowerCase());
  const [hours, minutes, seconds] = [hoursText, minutesText, secondsText].map(Number);
  // 60 is a leap second; Date.UTC rolls it into the next minute, which is close enough.
  if (hours > 23 || minutes > 59 || seconds > 60) return null;
  const midnight = Date.UTC(year, month, day);
  // Date.UTC rolls 31 February into March; a date that does not exist is garbage, not a wait.
  if (new Date(midnight).getUTCDate() !== day) return null;
  return midnight + ((hours * 60 + minutes) * 60 + seconds) * 1000;
}
