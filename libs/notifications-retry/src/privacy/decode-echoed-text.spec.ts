import { decodeEchoedText } from './decode-echoed-text';

/** `text` URL-encoded `times` times, as a chain of providers and proxies may leave it. */
function urlEncoded(text: string, times: number): string {
  let encoded = text;
  for (let i = 0; i < times; i++) encoded = encodeURIComponent(encoded);
  return encoded;
}

describe('decodeEchoedText', () => {
  it('undoes each JSON string escape it knows, and leaves \\b and \\f alone', () => {
    expect(decodeEchoedText('a\\"b \\\\ c\\/d')).toBe('a"b \\ c/d');
    expect(decodeEchoedText('line\\nnext\\rback\\ttab')).toBe('line\nnext\rback\ttab');
    expect(decodeEchoedText('\\u0040\\u00e9')).toBe('@é');
    // A Windows path stays a path.
    expect(decodeEchoedText('C:\\build\\fast')).toBe('C:\\build\\fast');
  });

  it('undoes every named HTML entity it knows, in any case', () => {
    expect(
      decodeEchoedText(
        '&amp; &lt; &gt; &quot; &apos; &nbsp; &commat; &plus; &period; &sol; &percnt;',
      ),
    ).toBe('& < > " \' \u00A0 @ + . / %');
    expect(decodeEchoedText('bob&COMMAT;example&Period;com')).toBe('bob@example.com');
  });

  it('keeps an entity it does not know as it is', () => {
    expect(decodeEchoedText('fish &chips; &x; & more')).toBe('fish &chips; &x; & more');
  });

  it('undoes decimal and hexadecimal character references, up to U+10FFFF', () => {
    expect(decodeEchoedText('&#64; &#x40; &#X40; &#x1F600; &#128512;')).toBe('@ @ @ 😀 😀');
    expect(decodeEchoedText('&#x10FFFF;')).toBe('\u{10FFFF}');
    expect(decodeEchoedText('&#1114111;')).toBe('\u{10FFFF}');
    // Beyond the last code point, a reference is not a character (and must not throw).
    expect(decodeEchoedText('&#x110000; &#1114112;')).toBe('&#x110000; &#1114112;');
    // Bounded digits: a reference of a hundred zeros is not a character either.
    expect(decodeEchoedText(`&#${'0'.repeat(100)}64;`)).toBe(`&#${'0'.repeat(100)}64;`);
  });

  it('undoes five layers of encoding, and no more', () => {
    expect(decodeEchoedText(urlEncoded('bob@example.com', 5))).toBe('bob@example.com');
    // The sixth layer is left: a crafted text cannot keep the loop going.
    expect(decodeEchoedText(urlEncoded('bob@example.com', 6))).toBe('bob%40example.com');
  });

  it('decodes invalid UTF-8 as U+FFFD instead of throwing', () => {
    expect(decodeEchoedText('bad %E2%82 byte')).toBe('bad \uFFFD byte');
  });
});
