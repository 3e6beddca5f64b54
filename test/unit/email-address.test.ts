import { describe, expect, it } from 'vitest';
import { formatAddress } from '#shared/email/port.ts';

/** Decode RFC 2047 B-encoded words back to text, as a mail client does. */
const decodeWords = (s: string) => s.replace(/=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=\s*/g, (_, b64: string) => Buffer.from(b64, 'base64').toString('utf8'));

describe('formatAddress (cc display names SES v2 accepts)', () => {
  it('an ASCII name is quoted with quotes and backslashes escaped; no name gives the bare address', () => {
    expect(formatAddress('a@x.example', 'Ann Lee')).toBe('"Ann Lee" <a@x.example>');
    expect(formatAddress('a@x.example', 'Ann "the boss" \\ Lee')).toBe('"Ann \\"the boss\\" \\\\ Lee" <a@x.example>');
    expect(formatAddress('a@x.example', null)).toBe('a@x.example');
    expect(formatAddress('a@x.example', '  ')).toBe('a@x.example');
  });

  it('a non-ASCII name becomes encoded words of at most 75 characters, ASCII only, that decode to the name', () => {
    for (const name of ['Zoë Ångström', '山田 太郎', '😀'.repeat(40), `Ñ${'a'.repeat(200)}`]) {
      const out = formatAddress('z@x.example', name);
      expect(out).toMatch(/^[\x20-\x7e]+$/);
      const [words, addr] = [out.slice(0, out.lastIndexOf(' <')), out.slice(out.lastIndexOf(' <') + 1)];
      expect(addr).toBe('<z@x.example>');
      for (const w of words.split(' ')) expect(w.length).toBeLessThanOrEqual(75);
      expect(decodeWords(words)).toBe(name);
    }
  });

  it('line breaks in a name never reach the header', () => {
    expect(formatAddress('a@x.example', 'Ann\r\nBcc: evil@x.example')).toBe('"Ann Bcc: evil@x.example" <a@x.example>');
  });
});
