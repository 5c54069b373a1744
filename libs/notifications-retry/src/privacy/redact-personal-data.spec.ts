import { containsPersonalData } from './contains-personal-data';
import { redactPersonalData, type PersonalValues } from './redact-personal-data';
import { isPlainErrorCode, redactStoredCode, redactStoredError } from './redact-stored-error';

const REDACTED = '[redacted]';

/** Every 8-character run of `value` that `text` holds, ignoring case and `+` for a space. */
function runsOf(value: string, text: string): string[] {
  const fold = (s: string): string => s.toLowerCase().replace(/[+\s]/g, ' ');
  const haystack = fold(text);
  const needle = fold(value);
  const found: string[] = [];
  for (let i = 0; i + 8 <= needle.length; i++) {
    const run = needle.slice(i, i + 8);
    if (haystack.includes(run)) found.push(run);
  }
  return found;
}

function expectNoRunOf(values: PersonalValues, text: string): void {
  for (const value of [values.recipientAddress, values.subject, values.body]) {
    if (value) expect(runsOf(value, text)).toEqual([]);
  }
}

/** JSON.stringify with every non-ASCII character as \uXXXX, as many JSON encoders write it. */
function jsonAscii(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

describe('redactPersonalData', () => {
  describe("the row's own values", () => {
    const row: PersonalValues = {
      recipientAddress: 'device-token-8f3a9c',
      subject: 'Dividend paid',
      body: 'Your dividend has been credited to the account ending 12',
    };

    it('removes the recipient address wherever it appears', () => {
      const out = redactPersonalData(
        'token device-token-8f3a9c rejected; retry device-token-8f3a9c later',
        row,
      );
      expect(out).not.toContain('device-token-8f3a9c');
      expect(out).toBe(`token ${REDACTED} rejected; retry ${REDACTED} later`);
    });

    it('removes the subject', () => {
      const out = redactPersonalData('template mismatch for "Dividend paid"', row);
      expect(out).not.toContain('Dividend paid');
      expect(out).toBe(`template mismatch for "${REDACTED}"`);
    });

    it('removes the body', () => {
      const out = redactPersonalData(`content blocked: ${row.body}`, row);
      expect(out).not.toContain('credited');
      expect(out).toBe(`content blocked: ${REDACTED}`);
    });

    it('treats the values literally, not as patterns', () => {
      // As a regular expression the value would match "aXbbbx" too.
      const values: PersonalValues = { recipientAddress: 'a.b+c*[x]' };
      expect(redactPersonalData('bad a.b+c*[x] here; aXbbbx stays', values)).toBe(
        `bad ${REDACTED} here; aXbbbx stays`,
      );
    });

    it('ignores absent values', () => {
      expect(
        redactPersonalData('HTTP 500', { recipientAddress: null, subject: undefined, body: '' }),
      ).toBe('HTTP 500');
    });

    // A body usually contains the subject or the address; removing those first would leave the
    // rest of the body unmatched, so the longest values must go first.
    it('removes a body that contains the subject', () => {
      const values: PersonalValues = {
        recipientAddress: 'bob@example.com',
        subject: 'Your order',
        body: 'Your order 42 has shipped to 221B Baker Street',
      };
      const out = redactPersonalData(`rejected: ${values.body}`, values);
      expect(out).not.toContain('Baker Street');
      expect(out).toBe(`rejected: ${REDACTED}`);
    });

    it('removes a body that contains the recipient address', () => {
      const values: PersonalValues = {
        recipientAddress: 'bob@example.com',
        subject: null,
        body: 'Dear bob@example.com, your parcel waits at the Camden depot',
      };
      const out = redactPersonalData(`bad content: ${values.body}`, values);
      expect(out).not.toContain('Camden depot');
    });
  });

  // Providers echo the request in whatever encoding they received or log it in: the row's values
  // must be found in each of them, and in any 8-character piece of them.
  describe("the row's values echoed in another form", () => {
    const email: PersonalValues = {
      recipientAddress: 'bob.smith@example.com',
      subject: 'Your parcel is on its way',
      body: 'Dear Bob, your parcel "X-42" ships\ttoday to 221B Baker Street,\ncafé corner.',
    };
    const token = 'fcm:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx';
    const push: PersonalValues = { recipientAddress: token, subject: null, body: 'Ping' };

    it('removes a URL-encoded address (%40)', () => {
      const out = redactPersonalData('rejected to=bob.smith%40example.com&ref=9', email);
      expectNoRunOf(email, out);
      expect(out).not.toMatch(/bob|smith/i);
      expect(out).toContain(REDACTED);
      expect(out).toContain('&ref=9');
    });

    it('removes a form-encoded subject (+ for a space, %XX for the rest)', () => {
      const out = redactPersonalData('bad field subject=Your+parcel+is+on+its+way%21', email);
      expectNoRunOf(email, out);
      expect(out).toContain('bad field subject=');
    });

    it('removes a JSON-escaped body (\\", \\n, \\t, \\u00e9)', () => {
      const echoed = jsonAscii({ to: email.recipientAddress, body: email.body });
      expect(echoed).toContain('\\"X-42\\"');
      expect(echoed).toContain('\\u00e9');
      const out = redactPersonalData(`400 Bad Request: ${echoed}`, email);
      expectNoRunOf(email, out);
      expect(out).not.toMatch(/baker|parcel|caf/i);
      expect(out).toContain('400 Bad Request');
    });

    it('removes a body JSON-encoded twice', () => {
      const echoed = jsonAscii(jsonAscii({ message: { body: email.body } }));
      expect(echoed).toContain('\\\\\\"X-42');
      const out = redactPersonalData(`gateway error ${echoed}`, email);
      expectNoRunOf(email, out);
      expect(out).not.toMatch(/baker|parcel/i);
      expect(out).toContain('gateway error');
    });

    it('removes JSON-escaped slashes and backslashes', () => {
      const values: PersonalValues = { body: 'see https://example.com/a\\b/private-page' };
      const out = redactPersonalData(
        `rejected "see https:\\/\\/example.com\\/a\\\\b\\/private-page"`,
        values,
      );
      expectNoRunOf(values, out);
    });

    it('removes an address written with HTML entities', () => {
      for (const echoed of [
        'bob.smith&#64;example.com',
        'bob.smith&#x40;example.com',
        'bob.smith&commat;example.com',
      ]) {
        const out = redactPersonalData(`<p>unknown user ${echoed}</p>`, email);
        expectNoRunOf(email, out);
        expect(out).toContain('unknown user');
      }
      const values: PersonalValues = { subject: 'Fish & Chips for two' };
      const out = redactPersonalData('bad subject: Fish &amp; Chips for two', values);
      expectNoRunOf(values, out);
    });

    it('removes the first 40 characters of a body', () => {
      const out = redactPersonalData(
        `content rejected: "${email.body!.slice(0, 40)}..." (policy 7)`,
        email,
      );
      expectNoRunOf(email, out);
      expect(out).toMatch(/^content rejected: "\[redacted\]\.\.\." \(policy 7\)$/);
    });

    it('removes the last part of a body', () => {
      const out = redactPersonalData(`...${email.body!.slice(-20)}`, email);
      expectNoRunOf(email, out);
    });

    it('removes an upper-cased subject', () => {
      const out = redactPersonalData(`TEMPLATE "${email.subject!.toUpperCase()}" NOT FOUND`, email);
      expectNoRunOf(email, out);
      expect(out).toBe(`TEMPLATE "${REDACTED}" NOT FOUND`);
    });

    it('removes a lower-cased address', () => {
      const values: PersonalValues = { recipientAddress: 'Device-Token-ABCdef123XYZ' };
      const out = redactPersonalData('no such token device-token-abcdef123xyz', values);
      expect(out).toBe(`no such token ${REDACTED}`);
    });

    it('removes half a push token, either half', () => {
      const half = token.length / 2;
      for (const piece of [token.slice(0, half), token.slice(half)]) {
        const out = redactPersonalData(`token ...${piece}... is not registered`, push);
        expect(runsOf(token, out)).toEqual([]);
        expect(out).toBe(`token ...${REDACTED}... is not registered`);
      }
    });

    // Every 8-character run of this name holds a letter that the encodings below escape: only
    // decoding finds it.
    describe('a value that no encoded form shows 8 characters of', () => {
      const name = 'Ærøskøbing Ålesund Ñuñoa';
      const values: PersonalValues = { subject: name };
      const htmlEncoded = name.replace(/[^\x20-\x7e]/g, (c) => `&#${c.charCodeAt(0)};`);
      it.each([
        ['URL-encoded', encodeURIComponent(name), REDACTED],
        ['JSON-escaped', jsonAscii(name), `"${REDACTED}"`],
        ['JSON-encoded twice', jsonAscii(jsonAscii(name)), `""${REDACTED}""`],
        [
          'URL-encoded, then JSON-encoded',
          jsonAscii({ q: encodeURIComponent(name) }),
          `{"q":"${REDACTED}"}`,
        ],
        ['HTML-encoded', htmlEncoded, REDACTED],
      ])('%s', (_label, echoed, stored) => {
        expect(runsOf(name, echoed)).toEqual([]);
        const out = redactPersonalData(`unknown template ${echoed}`, values);
        expect(out).toBe(`unknown template ${stored}`);
        expect(containsPersonalData(`x${echoed}`, values)).toBe(true);
      });
    });

    it('removes any 8-character slice of the address, but keeps a 7-character one', () => {
      expect(redactPersonalData(`bad ${token.slice(10, 18)} x`, push)).toBe(`bad ${REDACTED} x`);
      expect(redactPersonalData(`bad ${token.slice(10, 17)} x`, push)).toBe(
        `bad ${token.slice(10, 17)} x`,
      );
    });

    it("keeps the notification's own id, which a body may hold and providers echo", () => {
      const id = '6f1d2c3b-8a7e-4c0d-9b5a-1e2f3a4b5c6d';
      const values: PersonalValues = { ...email, body: `Track it: https://t.example/${id}`, id };
      expect(redactPersonalData(`duplicate idempotency key ${id}`, values)).toBe(
        `duplicate idempotency key ${id}`,
      );
      expect(redactPersonalData(`bad link https://t.example/${id}`, values)).toBe(
        // the space before "https" is part of a run of the body too
        `bad link${REDACTED}${id}`,
      );
      expect(containsPersonalData(`msg-${id}`, values)).toBe(false);
      expect(containsPersonalData(`msg-${id.slice(0, 8)}`, values)).toBe(true);
      // "-6f1d2c3" is a run of this address, but here its digits are the id's.
      const address: PersonalValues = { recipientAddress: `person-${id.slice(0, 8)}@x.test`, id };
      expect(containsPersonalData(`scripted-${id}`, address, { shapes: false })).toBe(false);
    });

    it('stores the decoded text, so that what an operator reads is what was checked', () => {
      expect(redactPersonalData('reason=quota%20exceeded \\"daily\\"', email)).toBe(
        'reason=quota exceeded "daily"',
      );
    });

    it('scans a bounded prefix of a huge error text, and still redacts in it', () => {
      const huge = `${email.body} ${'x'.repeat(100_000)}`;
      const started = performance.now();
      const out = redactPersonalData(huge, email);
      expect(performance.now() - started).toBeLessThan(1_000);
      expectNoRunOf(email, out);
      expect(out.length).toBeLessThanOrEqual(501);
    });

    it('drops what is left of an address cut at the scan bound, even where decoding shrank the text', () => {
      // URL-encoded three times, each € takes 21 characters: the bound falls within what is stored.
      const euros = '%2525E2%252582%2525AC'.repeat(389);
      const text = `${euros}zzz someone.else@exampl`;
      expect(text.length).toBe(8_192);
      const out = redactPersonalData(`${text}e.org is unknown`);
      expect(out).toBe(`${'€'.repeat(389)}zzz …`);
    });

    // URL-encoded three times, each € takes 21 characters; five times, 33.
    const euros3 = (count: number): string => '%2525E2%252582%2525AC'.repeat(count);
    const euros5 = (count: number): string => '%25252525E2%2525252582%25252525AC'.repeat(count);

    it('reads a text of exactly the scan bound whole', () => {
      const text = `${euros3(389)}zzz someone@example.org`;
      expect(text.length).toBe(8_192);
      expect(redactPersonalData(text)).toBe(`${'€'.repeat(389)}zzz ${REDACTED}`);
    });

    it('drops the 7 characters at the scan bound, which may be the start of a value', () => {
      const values: PersonalValues = { subject: 'Meet at 5 pm today' };
      const text = `${euros3(389)}${'z'.repeat(15)} ${values.subject}`;
      // The bound falls after "Meet at": fewer characters than a run, so not recognised.
      expect(text.slice(0, 8_192).endsWith(' Meet at')).toBe(true);
      expect(redactPersonalData(text, values)).toBe(`${'€'.repeat(389)}${'z'.repeat(15)} …`);
    });

    it('drops a cut last word of up to 254 characters (the longest e-mail address), no more', () => {
      const longWord = `${euros3(389)}${'z'.repeat(30)}`;
      // 412 characters scanned, 405 kept, the last 254 of them dropped.
      expect(redactPersonalData(longWord)).toBe(`${'€'.repeat(151)}…`);
      // All of a shorter word goes, however much of the text it is.
      const shortWord = `${euros5(248)}${'z'.repeat(30)}`;
      expect(redactPersonalData(shortWord)).toBe('…');
    });

    it('stays fast with a 100 KB body', () => {
      const body = Array.from({ length: 10_000 }, (_, i) => `w${i}rd `).join('');
      const values: PersonalValues = { ...email, body };
      const started = performance.now();
      const out = redactPersonalData(`rejected: ${body.slice(50_000, 50_100)}`, values);
      expect(performance.now() - started).toBeLessThan(1_000);
      expectNoRunOf({ body: body.slice(50_000, 50_100) }, out);
    });
  });

  describe('generic personal data', () => {
    it.each(['bob@example.com', 'first.last+tag@sub.example.co.uk', 'UPPER_case-99@Example.ORG'])(
      'removes an e-mail address that is not the row value (%s)',
      (email) => {
        const out = redactPersonalData(`delivery to <${email}> bounced`, {
          recipientAddress: 'someone@else.test',
        });
        expect(out).not.toContain(email);
        expect(out).toBe(`delivery to <${REDACTED}> bounced`);
      },
    );

    it.each([
      '+44 7700 900123',
      '+1 (555) 123-4567',
      '+447700900123',
      '07700 900 123',
      '555-123-4567',
    ])('removes a phone number (%s)', (phone) => {
      const out = redactPersonalData(`number ${phone} unreachable`);
      expect(out).not.toContain(phone);
      expect(out.replace(/[^\d]/g, '')).toBe('');
      expect(out).toMatch(/^number .*unreachable$/);
    });

    it('removes a card-like long number', () => {
      const out = redactPersonalData('charge 4111 1111 1111 1111 declined');
      expect(out).not.toMatch(/\d{4}/);
      expect(out).toBe(`charge ${REDACTED} declined`);
    });
  });

  describe('ordinary text', () => {
    it.each([
      'HTTP 503 Service Unavailable',
      'connect ECONNREFUSED on port 443',
      'provider call exceeded 10000 ms',
      'rate limited, retry after 30 s',
      'template_revoked',
      '',
    ])('is kept unchanged: %p', (text) => {
      expect(
        redactPersonalData(text, {
          recipientAddress: 'bob@example.com',
          subject: 'Hi',
          body: 'Hello Bob',
        }),
      ).toBe(text);
    });

    it('does not blank out short row values that would match ordinary words', () => {
      // a subject shorter than the verbatim threshold is not searched for
      expect(redactPersonalData('Hi from the gateway: error 42', { subject: 'Hi' })).toBe(
        'Hi from the gateway: error 42',
      );
    });
  });

  describe('length', () => {
    it('truncates long text to a bounded length', () => {
      const text = 'x'.repeat(10_000);
      const out = redactPersonalData(text);
      expect(out.length).toBeLessThan(1_000);
      expect(out.length).toBeGreaterThan(100);
      expect(text.startsWith(out.replace(/…$/, ''))).toBe(true);
      expect(out.endsWith('…')).toBe(true);
    });

    it('keeps short text whole', () => {
      const text = 'y'.repeat(200);
      expect(redactPersonalData(text)).toBe(text);
    });

    it('stores 500 characters whole, and cuts a 501st', () => {
      expect(redactPersonalData('y'.repeat(500))).toBe('y'.repeat(500));
      expect(redactPersonalData('y'.repeat(501))).toBe(`${'y'.repeat(500)}…`);
    });

    it('redacts before truncating, so personal data beyond the cut cannot be half-kept', () => {
      const email = 'long.recipient.name@example.com';
      // place the address across the truncation point
      const text = `${'z'.repeat(480)} ${email} ${'z'.repeat(100)}`;
      const out = redactPersonalData(text);
      expect(out).not.toContain('long.recipient');
      expect(out).not.toContain('@example');
    });

    it('truncates a long body echo only after removing the body', () => {
      const body = 'B'.repeat(2_000);
      const out = redactPersonalData(`rejected: ${body}`, { body });
      expect(out).toBe(`rejected: ${REDACTED}`);
    });
  });

  it('replaces NUL, which a PostgreSQL text column refuses, with U+FFFD', () => {
    expect(redactPersonalData('bad\u0000thing\u0000')).toBe('bad\uFFFDthing\uFFFD');
  });
});

describe('containsPersonalData', () => {
  const token = 'fcm:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx';
  const push: PersonalValues = {
    recipientAddress: token,
    subject: 'Price alert',
    body: 'ACME is up 5 %',
  };
  const sms: PersonalValues = {
    recipientAddress: '+447700900123',
    subject: null,
    body: 'Code 1234',
  };
  const email: PersonalValues = {
    recipientAddress: 'bob.smith@example.com',
    subject: 'Your parcel is on its way',
    body: 'Dear Bob, your parcel ships today.',
  };

  it('finds a code equal to a push token', () => {
    expect(containsPersonalData(token, push)).toBe(true);
    expect(containsPersonalData(token.toUpperCase(), push)).toBe(true);
  });

  it('finds a code holding half a push token', () => {
    expect(containsPersonalData(`bad_${token.slice(token.length / 2)}`, push)).toBe(true);
  });

  it("finds a code equal to a phone number: the row's, and any other", () => {
    expect(containsPersonalData('447700900123', sms)).toBe(true);
    expect(containsPersonalData('+447700900123', sms)).toBe(true);
    expect(containsPersonalData('15551234567', email)).toBe(true);
  });

  it('finds a message id that carries the address, in plain or encoded form', () => {
    expect(containsPersonalData('msg-bob.smith@example.com-1718000000', email)).toBe(true);
    expect(containsPersonalData('msg-bob.smith%40example.com-1718000000', email)).toBe(true);
    expect(containsPersonalData('msg-BOB.SMITH-1718000000', email)).toBe(true);
  });

  it('finds the whole of a short value, and a value JSON-encoded twice', () => {
    // "Hi Bob" is shorter than a run: only the whole value counts.
    expect(containsPersonalData('greeting:hi bob', { subject: 'Hi Bob' })).toBe(true);
    expect(containsPersonalData('greeting:hi_bob', { subject: 'Hi Bob' })).toBe(false);
    const twice = JSON.stringify(JSON.stringify({ s: email.subject }));
    expect(containsPersonalData(twice, email)).toBe(true);
  });

  it('finds any e-mail address', () => {
    expect(containsPersonalData('someone.else@example.org', email)).toBe(true);
  });

  it('reads only the first 8 KB, as redactPersonalData does', () => {
    expect(containsPersonalData(`${'x'.repeat(8_200)} someone.else@example.org`, email)).toBe(
      false,
    );
  });

  it.each([
    'http_503',
    'provider_rejected',
    'invalid_token',
    'quota.exceeded:daily',
    'sg-42',
    'E1234',
  ])('does not flag an ordinary code: %p', (code) => {
    expect(containsPersonalData(code, email)).toBe(false);
    expect(containsPersonalData(code, push)).toBe(false);
  });

  describe('{ shapes: false } (provider message ids)', () => {
    it.each([
      '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
      '<20260314120000.4f1c@mx.provider.example>',
      'projects/acme/messages/0:1500415314455276%31bd1c9631bd1c96',
      '1718000000123',
    ])('keeps an id that only looks like a number or an address: %p', (id) => {
      expect(containsPersonalData(id, email, { shapes: false })).toBe(false);
      expect(containsPersonalData(id, email)).toBe(true);
    });

    it("still finds the row's own values", () => {
      expect(containsPersonalData('id-bob.smith@example.com', email, { shapes: false })).toBe(true);
      expect(containsPersonalData(`id-${token}`, push, { shapes: false })).toBe(true);
      expect(containsPersonalData('sms-447700900123', sms, { shapes: false })).toBe(true);
    });
  });
});

describe('stored error codes', () => {
  const email: PersonalValues = { recipientAddress: 'bob.smith@example.com' };

  it('keeps a plain identifier of up to 64 characters', () => {
    for (const code of ['http_503', 'quota.exceeded:daily', 'sg-42', 'a'.repeat(64)]) {
      expect(isPlainErrorCode(code, email)).toBe(true);
      expect(redactStoredCode(code, email)).toBe(code);
    }
  });

  it.each([
    ['a 65th character', 'a'.repeat(65)],
    ['a space after the identifier', 'quota exceeded'],
    ['a space before it', 'bad quota'],
    ['an empty code', ''],
  ])('replaces a code with %s: it is not a plain identifier', (_label, code) => {
    expect(isPlainErrorCode(code)).toBe(false);
    expect(redactStoredCode(code)).toBe(REDACTED);
  });

  it('replaces a plain identifier that is personal data, whole', () => {
    expect(redactStoredCode('bob.smith@example.com')).toBe(REDACTED);
    expect(redactStoredCode('msg-BOB.SMITH', email)).toBe(REDACTED);
    expect(isPlainErrorCode('msg-BOB.SMITH')).toBe(true);
  });

  it("redacts a stored code and message against the row's values, keeping nulls", () => {
    expect(
      redactStoredError(
        { code: 'BOB.SMITH@example.com', message: 'to bob.smith@example.com' },
        email,
      ),
    ).toEqual({ code: REDACTED, message: `to ${REDACTED}` });
    expect(redactStoredError({ code: null, message: null }, email)).toEqual({
      code: null,
      message: null,
    });
    expect(redactStoredError({ code: 'http_503', message: 'HTTP 503' }, email)).toEqual({
      code: 'http_503',
      message: 'HTTP 503',
    });
  });
});
