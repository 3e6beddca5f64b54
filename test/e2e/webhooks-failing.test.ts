import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalArchive, type BusEvent } from '../../local/archive.ts';
import { FAILING_THRESHOLD } from '#shared/webhooks/delivery-rules.ts';
import { useReceiver, type Script } from '../fixtures/webhook-receiver.ts';
import { useGateway, type TestAccount } from '../support/api.ts';
import { archiveBusTo, localLambda } from '../support/lambda.ts';
import { usePipeline } from '../support/pipeline.ts';
import { readOutbox } from '../support/mail.ts';
import { eventually } from '../support/wait.ts';

// Failing webhooks switched off loudly (decisions §18): the count of events that exhausted their retries, webhook.disabled
// through the outbox to the bus (the bus archive records what it received) and to the admins' email, and reactivation.
const scratch = mkdtempSync(join(tmpdir(), 'webhooks-failing-'));
// Registered first, so it runs after the stack below has stopped writing there (afterAll hooks run in reverse).
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
process.env.EMAIL_OUTBOX_DIR = join(scratch, 'emails');
archiveBusTo(join(scratch, 'archive'));
const { client } = useGateway();
const receiver = useReceiver();
const { account, pipeline } = usePipeline(['webhook-fanout', 'webhook-delivery', 'email-sender']);
const BASE = '/helpdesk/api/v1/webhooks';
const started = new Date(Math.floor(Date.now() / 1000) * 1000);
let seq = 0;

/** A webhook on its own receiver path, answering 503 while `down.value` is true and 204 otherwise (or by `script`). */
async function webhook(acct: TestAccount, script?: Script) {
  const path = `/failing-${seq++}`;
  const down = { value: true };
  const res = await client.request('POST', BASE, { token: acct.ownerKey, body: { webhook: { name: `Sync ${path}`, targetUrl: receiver().url(path), events: ['ticket.created'] } } });
  expect(res.status, res.text).toBe(201);
  const endpoint = receiver().endpoint(path, res.body.webhook.signingSecret, script ?? (() => ({ status: down.value ? 503 : 204 })));
  return { id: res.body.webhook.id as string, endpoint, down };
}

const createTickets = async (acct: TestAccount, n: number) => {
  for (let i = 0; i < n; i++) {
    const res = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject: `event ${i}`, requesterEmail: 'ann@customer.example' } } });
    expect(res.status, res.text).toBe(201);
  }
};

/**
 * Every event so far handled to its end: each delivery's whole retry schedule run (WEBHOOK_RETRY_SCALE), the failing
 * rule applied, and what that sent (webhook.disabled, its emails) handled too. Asked of the pipeline once, instead of
 * polling the delivery log through the API meanwhile.
 */
const settled = () => pipeline().drained({ delayed: true });

type Attempt = { deliveryId: string; eventId: string; state: string; attempt: number };
const deliveries = async (acct: TestAccount, id: string): Promise<Attempt[]> => (await client.request('GET', `${BASE}/${id}/deliveries?limit=100`, { token: acct.ownerKey })).body.deliveries;
/** Once the pipeline has settled, the log (it must show `n` deliveries that ended in `state`). */
const ended = async (acct: TestAccount, id: string, state: string, n: number) => {
  await settled();
  return eventually(
    async () => {
      const log = await deliveries(acct, id);
      return log.filter((a) => a.state === state).length === n ? log : null;
    },
    30_000,
    `${n} deliveries ${state}`,
  );
};
const getWebhook = async (acct: TestAccount, id: string) => (await client.request('GET', `${BASE}/${id}`, { token: acct.ownerKey })).body.webhook;

/** The outbox's mails, each with its id (the file name: `webhook-disabled-<event>-<user>.eml`). */
const emails = async () => {
  if (!existsSync(process.env.EMAIL_OUTBOX_DIR!)) return [];
  return (await readOutbox(process.env.EMAIL_OUTBOX_DIR!)).map((m) => ({ ...m, id: m.file.replace(/\.eml$/, '') }));
};

/** The account's events of a type that the bus received, from its archive. */
async function onTheBus(accountId: string, detailType: string): Promise<BusEvent[]> {
  const archive = new LocalArchive(join(scratch, 'archive'), (await localLambda()).deployment.archive!);
  const found: BusEvent[] = [];
  for await (const e of archive.read(started, new Date(Date.now() + 60_000))) {
    if (e['detail-type'] === detailType && (e.detail as { accountId?: string }).accountId === accountId) found.push(e);
  }
  return found;
}

/** The account's webhook.disabled events on the bus, or null while there are none. */
const disabledOnTheBus = async (accountId: string) => {
  const found = await onTheBus(accountId, 'webhook.disabled');
  return found.length ? found : null;
};

describe('failing webhooks', () => {
  it('10 events in a row that exhaust their retries switch the webhook off (failing): webhook.disabled on the bus and an email to each admin', async () => {
    // Arrange: owner, an admin, a member and a suspended admin; a receiver that is down.
    const acct = await account();
    const admin = await acct.addUser('admin');
    await acct.addUser('member');
    const suspended = await acct.addUser('admin');
    await acct.updateUser(suspended.id, { status: 'suspended' });
    const hook = await webhook(acct);

    // Act
    await createTickets(acct, FAILING_THRESHOLD);

    // Assert: every event exhausted its 8 attempts, and the webhook is off.
    const log = await ended(acct, hook.id, 'failed', FAILING_THRESHOLD);
    expect(log).toHaveLength(FAILING_THRESHOLD * 8);
    const off = await eventually(async () => ((await getWebhook(acct, hook.id)).active ? null : getWebhook(acct, hook.id)), 10_000, 'webhook switched off');
    expect(off).toMatchObject({ active: false, disabledReason: 'failing' });

    const [event] = (await eventually(() => disabledOnTheBus(acct.accountId), 15_000, 'webhook.disabled on the bus'))!;
    expect(event).toMatchObject({
      source: 'support-desk.webhooks',
      detail: {
        eventId: expect.stringMatching(/^evt_/),
        accountId: acct.accountId,
        event: 'webhook.disabled',
        data: { webhook: { id: hook.id, name: off.name, targetUrl: off.targetUrl }, disabledReason: 'failing', consecutiveFailures: FAILING_THRESHOLD },
      },
    });
    const eventId = (event.detail as { eventId: string }).eventId;
    const mine = (await eventually(
      async () => {
        const found = (await emails()).filter((e) => e.id.startsWith(`webhook-disabled-${eventId}-`));
        return found.length >= 2 ? found : null;
      },
      15_000,
      'emails to the admins',
    ))!;
    await pipeline().drained();
    const sent = (await emails()).filter((e) => e.id.startsWith(`webhook-disabled-${eventId}-`));
    expect(sent.map((e) => e.id).sort()).toEqual([`webhook-disabled-${eventId}-${acct.ownerId}`, `webhook-disabled-${eventId}-${admin.id}`].sort());
    expect(mine[0].subject).toBe(`Webhook switched off: ${off.name}`);
    expect(mine[0].text).toContain(hook.id);
    expect(mine[0].text).toContain('10 events in a row failed every retry');

    // A webhook that is off gets nothing more.
    await createTickets(acct, 1);
    await pipeline().drained();
    expect(hook.endpoint.received).toHaveLength(FAILING_THRESHOLD * 8);
  }, 90_000);

  it('9 exhausted events, then a success, leave it on: the success resets the count', async () => {
    // Arrange
    const acct = await account();
    const hook = await webhook(acct);

    // Act: 9 events exhaust their retries; the receiver recovers for one; then one more exhausts.
    await createTickets(acct, FAILING_THRESHOLD - 1);
    await ended(acct, hook.id, 'failed', FAILING_THRESHOLD - 1);
    hook.down.value = false;
    await createTickets(acct, 1);
    await ended(acct, hook.id, 'succeeded', 1);
    hook.down.value = true;
    await createTickets(acct, 1);
    await ended(acct, hook.id, 'failed', FAILING_THRESHOLD);
    await pipeline().drained();

    // Assert: 10 exhausted in all, but never 10 in a row.
    expect(await getWebhook(acct, hook.id)).toMatchObject({ active: true, disabledReason: null });
    expect(await disabledOnTheBus(acct.accountId)).toBeNull();
  }, 90_000);

  it('setting active: true again clears the reason and the count, and the undelivered events can be redelivered', async () => {
    // Arrange: a webhook switched off as failing.
    const acct = await account();
    const hook = await webhook(acct);
    await createTickets(acct, FAILING_THRESHOLD);
    await ended(acct, hook.id, 'failed', FAILING_THRESHOLD);
    await eventually(async () => (await getWebhook(acct, hook.id)).disabledReason === 'failing', 10_000, 'switched off');

    // Act: the receiver is fixed and the webhook reactivated.
    hook.down.value = false;
    const on = await client.request('PUT', `${BASE}/${hook.id}`, { token: acct.ownerKey, body: { webhook: { active: true } } });

    // Assert: on, no reason; the failed events wait in the log and go out on redelivery.
    expect(on.status, on.text).toBe(200);
    expect(on.body.webhook).toMatchObject({ active: true, disabledReason: null });
    const failed = (await deliveries(acct, hook.id)).filter((a) => a.state === 'failed');
    expect(new Set(failed.map((a) => a.deliveryId)).size).toBe(FAILING_THRESHOLD);
    const re = await client.request('POST', `${BASE}/${hook.id}/deliveries/${failed[0].deliveryId}/redeliver`, { token: acct.ownerKey });
    expect(re.status, re.text).toBe(202);
    await eventually(() => hook.endpoint.received.some((r) => r.id === failed[0].eventId && r.status === 204), 15_000, 'redelivered');
    const audits = await client.request('GET', `/helpdesk/api/v1/audits?resource_type=webhook&resource_id=${hook.id}`, { token: acct.ownerKey });
    expect(audits.body.audits.at(-1).changes).toEqual(
      expect.arrayContaining([
        { field: 'active', from: false, to: true },
        { field: 'disabledReason', from: 'failing', to: null },
      ]),
    );

    // The count started again from zero: 9 more exhausted events leave it on.
    hook.down.value = true;
    await createTickets(acct, FAILING_THRESHOLD - 1);
    // The log shows the newest 100 attempts: the new events' 72 and their last, failed ones among them.
    const before = new Set(failed.map((a) => a.deliveryId));
    await settled();
    await eventually(
      async () => (await deliveries(acct, hook.id)).filter((a) => a.state === 'failed' && !before.has(a.deliveryId)).length === FAILING_THRESHOLD - 1,
      30_000,
      '9 new deliveries failed',
    );
    await pipeline().drained();
    expect(await getWebhook(acct, hook.id)).toMatchObject({ active: true, disabledReason: null });
  }, 120_000);

  it('a 410 switches it off as gone, with webhook.disabled too', async () => {
    const acct = await account();
    const hook = await webhook(acct, () => ({ status: 410 }));

    await createTickets(acct, 1);
    await settled();

    await eventually(async () => (await getWebhook(acct, hook.id)).disabledReason === 'gone', 15_000, 'switched off as gone');
    const [event] = (await eventually(() => disabledOnTheBus(acct.accountId), 15_000, 'webhook.disabled on the bus'))!;
    expect(event.detail).toMatchObject({ data: { webhook: { id: hook.id }, disabledReason: 'gone', consecutiveFailures: 0 } });
  });
});
