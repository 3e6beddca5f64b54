import { describe, expect, it } from 'vitest';
import { contentDisposition, FileNameSchema } from '#shared/attachments/model.ts';

/** A header value: printable ASCII only (what S3 signs and stores, and what a browser reads). */
const HEADER_VALUE = /^[\x20-\x7e]*$/;

describe('contentDisposition', () => {
  it('quotes a plain name and encodes a Unicode one exactly (RFC 6266 / 8187)', () => {
    expect(contentDisposition('logo.svg')).toBe(`attachment; filename="logo.svg"; filename*=UTF-8''logo.svg`);
    expect(contentDisposition('Screenshot <1> é.svg')).toBe(`attachment; filename="Screenshot <1> _.svg"; filename*=UTF-8''Screenshot%20%3C1%3E%20%C3%A9.svg`);
    expect(contentDisposition('a "b"; c%d\\e.txt')).toBe(`attachment; filename="a _b__ c_d_e.txt"; filename*=UTF-8''a%20%22b%22%3B%20c%25d%5Ce.txt`);
    expect(contentDisposition('family 👨‍👩‍👧.png')).toMatch(/filename\*=UTF-8''family%20%F0%9F%91%A8%E2%80%8D/);
  });

  // Issue 33: a lone surrogate made encodeURIComponent throw (a 500). The schema refuses such names now; a name that
  // reaches the header anyway (stored before the rule) still builds one.
  it.each([
    ['the fuzzer’s name', 'report\u202E\ud800fdp.exe'],
    ['a lone high surrogate', 'a\ud800'],
    ['a lone low surrogate', '\udc00b'],
    ['reversed surrogates', '\ude00\ud83d'],
    ['only surrogates', '\ud800\ud800\ud800'],
    ['a right-to-left override', 'invoice\u202Efdp.exe'],
    ['isolates and marks', '\u2066\u2067\u2068\u2069\u200E\u200F\u061C'],
    ['control characters', 'a\u0000b\r\nc\u007f\u009f'],
    ['an empty name', ''],
  ])('never throws and stays a header value with %s', (_label, name) => {
    const header = contentDisposition(name);
    expect(header).toMatch(HEADER_VALUE);
    expect(header).toMatch(/^attachment; filename="[^"]*"; filename\*=UTF-8''[A-Za-z0-9%!._~-]*$/);
  });

  it('shows a bidirectional control or lone surrogate as "_" in both forms', () => {
    expect(contentDisposition('invoice\u202Efdp.exe')).toBe(`attachment; filename="invoice_fdp.exe"; filename*=UTF-8''invoice_fdp.exe`);
    expect(contentDisposition('a\ud800b')).toBe(`attachment; filename="a_b"; filename*=UTF-8''a_b`);
  });

  it('never throws whatever string reaches it (every single UTF-16 code unit, in and around a name)', () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const c = String.fromCharCode(unit);
      expect(contentDisposition(`x${c}y${c}`)).toMatch(HEADER_VALUE);
    }
  });
});

describe('FileNameSchema (the name rule of shared/text.ts, plus "/" and "\\")', () => {
  it.each(['a/b', 'a\\b', 'a\u0007b', 'a\u202Eb', 'a\u200Eb', 'a\u200Fb', 'a\u202Ab', 'a\u2066b', 'a\u2069b', 'a\u061Cb', 'a\ud800b', '\udc00', ''])('refuses %j', (name) => {
    expect(FileNameSchema.safeParse(name).success).toBe(false);
  });

  it.each(['report.pdf', 'مستند.txt', 'שלום.txt', 'family 👨\u200D👩\u200D👧.png', 'e\u0301.txt', 'soft\u00ADhyphen.txt'])('takes %j', (name) => {
    expect(FileNameSchema.safeParse(name).success).toBe(true);
  });
});
