import { redactPersonalData, type PersonalValues } from './redact-personal-data';

const REDACTED = '[redacted]';

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
      const values: PersonalValues = { recipientAddress: 'a.b+c(1)*[x]?' };
      expect(redactPersonalData('bad a.b+c(1)*[x]? here; aXb+c(1)*[x]? stays', values)).toBe(
        `bad ${REDACTED} here; aXb+c(1)*[x]? stays`,
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
