import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { replyText } from '#shared/email/reply-text.ts';

/** The text part of a fixture: parsed as the inbound function parses a mail (.eml), or as it is (.txt). */
async function textOf(file: string): Promise<string> {
  const raw = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'replies', file), 'latin1');
  return file.endsWith('.eml') ? ((await PostalMime.parse(raw)).text ?? '') : raw;
}

const LOREM = 'Fusce bibendum, quam hendrerit sagittis tempor';

describe('what a reply by mail says (decisions §24), on replies written by real mail clients', () => {
  it.each([
    ['gmail.txt', 'Gmail'],
    ['outlook.eml', 'Outlook'],
    ['apple-mail.eml', 'Apple Mail'],
    ['thunderbird.eml', 'Thunderbird'],
    ['iphone.eml', 'iPhone Mail'],
    ['android-outlook.txt', 'Outlook for Android'],
  ])('%s (%s) comes down to the new text', async (file) => {
    // Arrange
    const text = await textOf(file);
    // Act
    const kept = replyText(text);
    // Assert: the new words stay; the quoted history and its header go (and iPhone's "Sent from my iPhone"; Outlook for Android's download line is kept as the parser keeps it).
    expect(kept).not.toBeNull();
    expect(kept).not.toMatch(/wrote:|^>|^From:|^Sent:|^Subject:|Sent from my/m);
    if (file.endsWith('.txt')) expect(kept!.startsWith(LOREM)).toBe(true);
    else expect(kept).toBe('Hello');
  });

  it('leaves out the signature after "-- " and a forwarded original', () => {
    expect(replyText('Thanks, it works.\n\n-- \nJane Doe\nACME Corp\n')).toBe('Thanks, it works.');
    expect(replyText('See below.\n\n---------- Forwarded message ---------\nFrom: Bob <bob@example.com>\nSubject: Printer\n\nThe original')).toBe('See below.');
    expect(replyText('FYI\n\nBegin forwarded message:\n\nFrom: Bob <bob@example.com>\n\nThe original')).toBe('FYI');
  });

  it('answers null when there is nothing to take away, or only quoted text', () => {
    expect(replyText('Just a plain question about my order.\nLine two.')).toBeNull();
    expect(replyText('> only a quote\n> nothing new')).toBeNull();
  });
});
