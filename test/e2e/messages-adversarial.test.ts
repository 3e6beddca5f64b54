import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';
import { as, MESSAGES, newTicket } from '../support/helpdesk.ts';

const { client } = useGateway();

// Text derivation was quadratic on runs of spaces (100,000 spaces took seconds of CPU per POST).
describe('POST /messages with adversarial content', () => {
  it('100,000 characters of spaces, tabs and line breaks are stored with their text in bounded time', async () => {
    const acct = await createTestAccount();
    const t = await newTicket(as(client, acct.ownerKey));
    // Messages need a session token.
    const d = as(client, await acct.session(acct.ownerId));
    for (const content of [`${' '.repeat(99_990)}<p>end</p>`, `${' \t'.repeat(49_990)}\n<p>x</p>`, `${'&nbsp; '.repeat(14_000)}<br>y`]) {
      const started = Date.now();
      const res = await d.post(MESSAGES, { ticket_id: t.id, type: 'note', content, send_email: false });
      expect(res.status, res.text.slice(0, 300)).toBe(201);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(res.body.data.textContent).toMatch(/^(end|x|y)$/);
    }
  });

  it('a 1 MiB body is refused with a 4xx at once, before any sanitizing', async () => {
    const acct = await createTestAccount();
    const t = await newTicket(as(client, acct.ownerKey));
    // Messages need a session token.
    const d = as(client, await acct.session(acct.ownerId));
    const started = Date.now();
    const res = await d.post(MESSAGES, { ticket_id: t.id, type: 'note', content: ' '.repeat(1 << 20), send_email: false });
    expect([413, 422]).toContain(res.status);
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
