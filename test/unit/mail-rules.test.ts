import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { parseInboundAddress } from '#shared/email/addresses.ts';
import { attachmentName, isAutomatic, messageIds, textAsHtml, threadCandidates, ticketSubject, withoutReplyPrefix } from '#shared/email/mail-rules.ts';
import { composeMime } from '#shared/email/mime.ts';
import { appendIds, THREAD_IDS_KEPT } from '#shared/email/repository.ts';

const h = (key: string, value: string) => ({ key, value });

describe('automatic mail (decisions §17: recorded, never answered)', () => {
  it.each([
    [[h('Auto-Submitted', 'auto-replied')], true],
    [[h('auto-submitted', 'auto-generated; owner-email="x@y.example"')], true],
    [[h('Auto-Submitted', 'no')], false],
    [[h('Auto-Submitted', 'No')], false],
    [[h('Precedence', 'bulk')], true],
    [[h('Precedence', 'junk')], true],
    [[h('Precedence', 'list')], true],
    [[h('Precedence', 'first-class')], false],
    [[h('X-Autoreply', 'yes')], true],
    [[h('X-Autorespond', 'Out of office')], true],
    [[h('Subject', 'Auto-Submitted: no')], false],
    [[], false],
  ])('%j -> %s', (headers, automatic) => expect(isAutomatic(headers)).toBe(automatic));
});

describe('threading ids', () => {
  it('reads bracketed ids, and bare ids of clients that drop the brackets', () => {
    expect(messageIds('<a@x.example> <b@x.example>')).toEqual(['<a@x.example>', '<b@x.example>']);
    expect(messageIds('<a@x.example>\r\n <b@x.example>')).toEqual(['<a@x.example>', '<b@x.example>']);
    expect(messageIds('a@x.example')).toEqual(['<a@x.example>']);
    expect(messageIds('')).toEqual([]);
    expect(messageIds(null)).toEqual([]);
  });

  it('tries In-Reply-To first, then References newest to oldest, each once, at most the cap', () => {
    expect(threadCandidates('<c@x>', '<a@x> <b@x> <c@x>')).toEqual(['<c@x>', '<b@x>', '<a@x>']);
    expect(threadCandidates(undefined, '<a@x> <b@x>')).toEqual(['<b@x>', '<a@x>']);
    const many = Array.from({ length: 500 }, (_, i) => `<m${i}@x>`).join(' ');
    expect(threadCandidates(null, many)).toHaveLength(20);
    expect(threadCandidates(null, many)[0]).toBe('<m499@x>');
  });

  it('a thread keeps its root and the latest ids', () => {
    const ids = Array.from({ length: 30 }, (_, i) => `<${i}@x>`);
    const kept = appendIds(ids.slice(0, 25), ids.slice(25));
    expect(kept).toHaveLength(THREAD_IDS_KEPT);
    expect(kept[0]).toBe('<0@x>');
    expect(kept.at(-1)).toBe('<29@x>');
    expect(appendIds(['<a@x>'], ['<a@x>', '<b@x>'])).toEqual(['<a@x>', '<b@x>']);
  });
});

describe('inbound addresses', () => {
  const domain = 'inbound.localhost';
  const id = 'acct_01JX8Z3Q4R5S6T7V8W9XAYBZC0';
  it.each([
    [`${id.toLowerCase()}@${domain}`, { accountId: id, replyToken: null }],
    [`${id.toLowerCase()}@INBOUND.localhost`, { accountId: id, replyToken: null }],
    [`${id}@${domain}`, { accountId: id, replyToken: null }],
    [`${id.toLowerCase()}+abc234@${domain}`, { accountId: id, replyToken: 'abc234' }],
    [`${id.toLowerCase()}@other.example`, null],
    [`someone@${domain}`, null],
    [`acct_short@${domain}`, null],
    [`${id.toLowerCase()}+bad token@${domain}`, null],
    ['no-at-sign', null],
  ])('%s', (address, expected) => expect(parseInboundAddress(address, domain)).toEqual(expected));
});

describe('what a mail makes', () => {
  it('a subject, or (no subject); one line, at most 255 characters', () => {
    expect(ticketSubject('  Hello\r\n   world ')).toBe('Hello world');
    expect(ticketSubject('')).toBe('(no subject)');
    expect(ticketSubject(undefined)).toBe('(no subject)');
    expect(ticketSubject('\u0007')).toBe('(no subject)');
    expect([...ticketSubject('é'.repeat(400))]).toHaveLength(255);
  });

  it('a text part as escaped paragraphs', () => {
    expect(textAsHtml('Hi <b>\n\nline one\nline two')).toBe('<p>Hi &lt;b&gt;</p><p>line one<br>line two</p>');
    expect(textAsHtml('')).toBe('<p></p>');
  });

  it('attachment names without paths, with a name made up when there is none', () => {
    expect(attachmentName('../../etc/passwd', 'text/plain', 0)).toBe('.._.._etc_passwd');
    expect(attachmentName(null, 'image/png', 2)).toBe('attachment-3.png');
    expect(attachmentName('in\u202Evoice.pdf', 'application/pdf', 0)).toBe('in voice.pdf');
  });
});

describe('the MIME we send', () => {
  it('parses back with every thread header, non-ASCII names and subjects intact', async () => {
    const raw = composeMime({
      from: { email: 'support@example.com', name: 'Ünïcode Support' },
      to: [{ email: 'buyer@shop.example', name: 'Buyer "B"' }],
      cc: [{ email: 'cc@shop.example' }],
      replyTo: { email: 'acct_x+token@inbound.localhost' },
      subject: 'Re: Ваш заказ — 注文 [tkt_1]',
      messageId: '<msg_2@inbound.localhost>',
      inReplyTo: '<b@shop.example>',
      references: Array.from({ length: 12 }, (_, i) => `<ref-${i}-with-a-long-id-part@mail.shop.example>`),
      headers: { 'X-Support-Desk-Ticket': 'tkt_1' },
      text: 'Hello\nthere',
      html: '<p>Hello</p>',
    });
    for (const line of raw.split('\r\n')) expect(line.length).toBeLessThanOrEqual(998);
    const mail = await PostalMime.parse(raw);
    expect(mail.subject).toBe('Re: Ваш заказ — 注文 [tkt_1]');
    expect(mail.from).toMatchObject({ address: 'support@example.com', name: 'Ünïcode Support' });
    expect(mail.to?.[0]).toMatchObject({ address: 'buyer@shop.example', name: 'Buyer "B"' });
    expect(mail.messageId).toBe('<msg_2@inbound.localhost>');
    expect(mail.inReplyTo).toBe('<b@shop.example>');
    expect(messageIds(mail.references)).toHaveLength(12);
    expect(mail.replyTo?.[0]).toMatchObject({ address: 'acct_x+token@inbound.localhost' });
    expect(mail.text?.trim()).toBe('Hello\nthere');
    expect(mail.html).toBe('<p>Hello</p>');
  });
});

describe('the subject of a response', () => {
  it.each([
    ['Re: My order', 'My order'],
    ['RE: re:  Fwd: My order', 'My order'],
    ['AW: Bestellung', 'Bestellung'],
    ['Regarding my order', 'Regarding my order'],
    ['My order', 'My order'],
  ])('%s -> %s', (given, expected) => expect(withoutReplyPrefix(given)).toBe(expected));
});
