import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { useReceiver } from '../fixtures/webhook-receiver.ts';
import { useGateway, type TestAccount } from '../support/api.ts';
import { readOutbox } from '../support/mail.ts';
import { usePipeline } from '../support/pipeline.ts';
import { surveyTokenInStore } from '../support/store.ts';
import { eventually } from '../support/wait.ts';

/**
 * Satisfaction ratings end to end (decisions §24): the setting, the survey
 * mail the email sender writes when a ticket is resolved, its link opened in
 * Chromium (good, then a comment), the rating on the ticket, in the list, in
 * the audit and as ticket.rated to a webhook; and links that must record
 * nothing.
 */
const outbox = mkdtempSync(join(tmpdir(), 'sd-survey-'));
process.env.EMAIL_OUTBOX_DIR = outbox;
const { client, url } = useGateway();
const { account, pipeline } = usePipeline(['email-sender', 'webhook-fanout', 'webhook-delivery']);
const receiver = useReceiver();

/** Debian's chromium (apt-get install -y chromium); .ci/run installs it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const V1 = '/helpdesk/api/v1';
const NASTY = `Printer <script>alert("x")</script> & 'co'`;

const ok = async (a: TestAccount, method: string, path: string, body?: unknown, status = 200) => {
  const res = await client.request(method, path, { token: a.ownerKey, body });
  expect(res.status, `${method} ${path}: ${res.text.slice(0, 300)}`).toBe(status);
  return res.body;
};
const newTicket = async (a: TestAccount, subject = 'Printer jam') =>
  (await ok(a, 'POST', `${V1}/tickets`, { ticket: { subject, requesterEmail: `jane.${Date.now()}@customer.example`, requesterName: 'Jane', assigneeId: a.ownerId } }, 201)).ticket;
const resolve = (a: TestAccount, id: string) => ok(a, 'PUT', `${V1}/tickets/${id}`, { ticket: { status: 'resolved' } });
const ticket = async (a: TestAccount, id: string) => (await ok(a, 'GET', `${V1}/tickets/${id}`)).ticket;
const page = (path: string, init?: RequestInit) => fetch(url() + path, init);

describe('satisfaction settings', () => {
  it('are off by default, admin only, and audited when changed', async () => {
    const a = await account();
    expect(await ok(a, 'GET', `${V1}/satisfaction/settings`)).toEqual({ settings: { enabled: false } });
    expect(await ok(a, 'PUT', `${V1}/satisfaction/settings`, { settings: { enabled: true } })).toEqual({ settings: { enabled: true } });
    expect(await ok(a, 'GET', `${V1}/satisfaction/settings`)).toEqual({ settings: { enabled: true } });
    const agent = await a.addUser('member');
    const res = await client.request('PUT', `${V1}/satisfaction/settings`, { token: await a.session(agent.id), body: { settings: { enabled: false } } });
    expect(res.status).toBe(403);
    const audits = (await ok(a, 'GET', `${V1}/audits?resource_type=account`)).audits;
    expect(audits.flatMap((x: any) => x.changes)).toContainEqual({ field: 'satisfaction.enabled', from: false, to: true });
  });
});

describe('the survey mail and its page', () => {
  it.skipIf(!existsSync(CHROMIUM))(
    'a resolved ticket gets one mail; good from its link and a comment in Chromium show on the ticket, in the list, the audit and a webhook',
    { timeout: 90_000 },
    async () => {
      // Chromium starts (processes of its own) while the ticket is resolved and its mail written.
      const { chromium } = await import('playwright-core');
      const launched = chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
      onTestFinished(async () => (await launched.catch(() => undefined))?.close());

      // Arrange: survey on, a webhook for ticket.rated, a ticket with markup in its subject, resolved twice (reopened between).
      const a = await account();
      await ok(a, 'PUT', `${V1}/satisfaction/settings`, { settings: { enabled: true } });
      const hook = (await ok(a, 'POST', `${V1}/webhooks`, { webhook: { name: 'csat', targetUrl: receiver().url('/csat'), events: ['ticket.rated'] } }, 201)).webhook;
      const received = receiver().endpoint('/csat', hook.signingSecret);
      const t = await newTicket(a, NASTY);
      await resolve(a, t.id);
      await pipeline().drained();
      await ok(a, 'PUT', `${V1}/tickets/${t.id}`, { ticket: { status: 'open' } });
      await resolve(a, t.id);
      await pipeline().drained();

      // The mail: one for the ticket, however often it was resolved.
      const mails = (await readOutbox(outbox)).filter((m) => m.raw.includes(t.id));
      expect(mails.map((m) => m.file)).toEqual([`survey-${t.id}.eml`]);
      expect(mails[0].subject).toContain('How did we do?');
      expect(mails[0].header('auto-submitted')).toBe('auto-generated');
      const links = [...mails[0].text.matchAll(/https?:\/\/\S+\/helpdesk\/satisfaction\/[a-z2-7]{32}\?score=(good|bad)/g)].map((m) => new URL(m[0]));
      expect(links.map((l) => l.searchParams.get('score'))).toEqual(['good', 'bad']);
      // The link names the local gateway the stack runs (http://localhost:<PORT>); this test's gateway listens on its own port.
      const good = url() + links[0].pathname + links[0].search;

      // Act: open the link in Chromium, write a comment, send it.
      const comment = 'Quick and kind <b>thanks</b>';
      const tab = await (await launched).newPage();
      const first = await tab.goto(good);
      expect(first?.status()).toBe(200);
      expect(await tab.locator('#rating').innerText()).toContain('good');
      // Nothing from the ticket unescaped: the subject is text, and the page runs no script at all.
      expect(await tab.locator('script').count()).toBe(0);
      expect(await tab.locator('q').innerText()).toBe(NASTY);
      await tab.getByLabel(/Anything you would like to add/).fill(comment);
      await tab.getByRole('button', { name: 'Send comment' }).click();
      await tab.waitForSelector('#saved');
      expect(await tab.locator('textarea').inputValue()).toBe(comment);

      // Assert: the ticket, the list, the audit and the webhook show the score and the comment.
      const rated = await ticket(a, t.id);
      expect(rated.satisfactionRating).toMatchObject({ score: 'good', comment });
      const list = await ok(a, 'GET', `${V1}/satisfaction_ratings?score=good`);
      expect(list.ratings).toEqual([expect.objectContaining({ ticketId: t.id, score: 'good', comment, assigneeId: a.ownerId, groupId: null })]);
      expect((await ok(a, 'GET', `${V1}/satisfaction_ratings?score=bad`)).ratings).toEqual([]);
      const audits = (await ok(a, 'GET', `${V1}/tickets/${t.id}/audits`)).audits.filter((x: any) => x.via === 'satisfaction');
      expect(audits).toHaveLength(2);
      expect(audits[0].actor).toEqual({ type: 'requester', id: null });
      await pipeline().drained();
      const events = await eventually(() => {
        const got = received.received.map((r) => JSON.parse(r.body));
        return got.length >= 2 ? got : undefined;
      });
      // Deliveries may arrive in either order: the click's, then the comment's.
      const seen = events!.map((e: any) => [e.event, e.data.id, e.data.rating.score, e.data.rating.comment]);
      expect(seen).toHaveLength(2);
      expect(seen).toEqual(
        expect.arrayContaining([
          ['ticket.rated', t.id, 'good', null],
          ['ticket.rated', t.id, 'good', comment],
        ]),
      );
    },
  );

  it('a later click changes the score, a repeat changes nothing, and a JSON comment works', async () => {
    const a = await account();
    const t = await newTicket(a);
    const token = await surveyTokenInStore(a.accountId, t.id);
    expect((await page(`/helpdesk/satisfaction/${token}?score=good`)).status).toBe(200);
    expect((await page(`/helpdesk/satisfaction/${token}?score=good`)).status).toBe(200);
    const bad = await page(`/helpdesk/satisfaction/${token}?score=bad`);
    expect(bad.status).toBe(200);
    expect(bad.headers.get('content-type')).toMatch(/^text\/html/);
    expect(bad.headers.get('referrer-policy')).toBe('no-referrer');
    const json = await page(`/helpdesk/satisfaction/${token}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ comment: 'Slow' }) });
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ rating: { score: 'bad', comment: 'Slow' } });
    expect((await ticket(a, t.id)).satisfactionRating).toMatchObject({ score: 'bad', comment: 'Slow' });
    const audits = (await ok(a, 'GET', `${V1}/tickets/${t.id}/audits`)).audits.filter((x: any) => x.via === 'satisfaction');
    expect(audits).toHaveLength(3);
    const list = (await ok(a, 'GET', `${V1}/satisfaction_ratings`)).ratings;
    expect(list).toHaveLength(1);
  });

  it('records nothing from an unknown, expired or malformed token, a wrong score, an over-long comment, or a deleted ticket; another ticket’s token rates only that ticket', async () => {
    const a = await account();
    const [t, other, gone] = [await newTicket(a), await newTicket(a), await newTicket(a)];
    const expired = await surveyTokenInStore(a.accountId, t.id, Date.now() - 1000);
    const otherToken = await surveyTokenInStore(a.accountId, other.id);
    const tToken = await surveyTokenInStore(a.accountId, t.id);
    const goneToken = await surveyTokenInStore(a.accountId, gone.id);
    await ok(a, 'DELETE', `${V1}/tickets/${gone.id}`, undefined, 204);

    const cases: Array<[string, RequestInit | undefined, number]> = [
      [`/helpdesk/satisfaction/${'a'.repeat(32)}?score=good`, undefined, 404],
      [`/helpdesk/satisfaction/not-a-token?score=good`, undefined, 404],
      [`/helpdesk/satisfaction/${expired}?score=good`, undefined, 404],
      [`/helpdesk/satisfaction/${goneToken}?score=good`, undefined, 404],
      [`/helpdesk/satisfaction/${tToken}?score=great`, undefined, 400],
      [`/helpdesk/satisfaction/${tToken}?score=%3Cscript%3E`, undefined, 400],
      // A comment before any score, and one over 2,000 characters.
      [`/helpdesk/satisfaction/${tToken}`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'comment=hello' }, 400],
      [`/helpdesk/satisfaction/${tToken}`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `comment=${'x'.repeat(2001)}` }, 422],
    ];
    for (const [path, init, status] of cases) {
      const res = await page(path, init);
      expect(res.status, path).toBe(status);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      const body = await res.text();
      expect(body, path).not.toContain('<script>');
    }
    // Another ticket's token rates that ticket, never this one.
    expect((await page(`/helpdesk/satisfaction/${otherToken}?score=bad`)).status).toBe(200);
    expect((await ticket(a, t.id)).satisfactionRating).toBeNull();
    expect((await ticket(a, other.id)).satisfactionRating).toMatchObject({ score: 'bad' });
    const list = (await ok(a, 'GET', `${V1}/satisfaction_ratings`)).ratings;
    expect(list.map((r: any) => r.ticketId)).toEqual([other.id]);
  });
});
