/**
 * The local pipeline reports when it is drained (local/pipeline.ts,
 * `drained`): the other tests assert "nothing happened" after it, so it must
 * not answer while something is still on its way.
 */
import { describe, expect, it } from 'vitest';
import { useReceiver, type Script } from '../fixtures/webhook-receiver.ts';
import { useGateway, type TestAccount } from '../support/api.ts';
import { usePipeline } from '../support/pipeline.ts';

const { client } = useGateway();
const receiver = useReceiver();
const { account, pipeline } = usePipeline(['webhook-fanout', 'webhook-delivery']);
let seq = 0;

/** A webhook on ticket.created, on its own receiver path answering by `script`. */
async function webhook(acct: TestAccount, script?: Script) {
  const path = `/drained-${seq++}`;
  const res = await client.request('POST', '/helpdesk/api/v1/webhooks', { token: acct.ownerKey, body: { webhook: { name: path, targetUrl: receiver().url(path), events: ['ticket.created'] } } });
  expect(res.status).toBe(201);
  return receiver().endpoint(path, res.body.webhook.signingSecret, script);
}

const createTicket = async (acct: TestAccount) =>
  expect((await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject: 'Drain me' } } })).status).toBe(201);

describe('pipeline.drained()', () => {
  it('answers only once a committed change has gone all the way: stream, publisher, bus, fan-out, delivery', async () => {
    const acct = await account();
    const hook = await webhook(acct);
    for (let n = 1; n <= 5; n++) {
      await createTicket(acct);

      await pipeline().drained();

      expect(hook.received).toHaveLength(n);
    }
  });

  it('waits for a scheduled retry only when asked to (delayed)', async () => {
    const acct = await account();
    // Two 500s, each retried after the (test-scaled) delay, then a 200.
    const retried = await webhook(acct, (n) => ({ status: n <= 2 ? 500 : 200 }));
    await createTicket(acct);

    await pipeline().drained({ delayed: true });

    expect(retried.received.map((r) => r.status)).toEqual([500, 500, 200]);
  });

  it('does not wait for a retry due long after (a Retry-After of 100 s, test-scaled)', async () => {
    const acct = await account();
    const later = await webhook(acct, () => ({ status: 503, headers: { 'Retry-After': '10000000' } }));
    await createTicket(acct);

    await pipeline().drained();

    expect(later.received.map((r) => r.status)).toEqual([503]);
  });
});
