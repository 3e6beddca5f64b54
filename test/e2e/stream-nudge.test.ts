/**
 * The local pipeline reads the table's stream when a function has committed a write to it (local/lambda/index.ts,
 * `afterWrites`), not after every invocation: a read, which writes nothing there, starts no read of the stream (it cost
 * a GET 2 ms of Node CPU and 1.5 ms of the store's), and a write's event goes out without waiting for the idle poll.
 */
import { describe, expect, it } from 'vitest';
import { useReceiver } from '../fixtures/webhook-receiver.ts';
import { useGateway } from '../support/api.ts';
import { localLambda } from '../support/lambda.ts';
import { usePipeline } from '../support/pipeline.ts';
import { eventually } from '../support/wait.ts';

const { client } = useGateway();
const receiver = useReceiver();
// The stream is read only when something asks: its idle poll is ten minutes away.
const { account } = usePipeline(['webhook-fanout', 'webhook-delivery'], { pollIntervalMs: 600_000, idleStreamMaxMs: 600_000 });

describe('reading the stream after writes', () => {
  it('a committed write to the table is reported and its event goes out at once; reads and the rate-limit count are not reported', async () => {
    const lambda = await localLambda();
    const acct = await account();
    const made = await client.request('POST', '/helpdesk/api/v1/webhooks', {
      token: acct.ownerKey,
      body: { webhook: { name: 'nudge', targetUrl: receiver().url('/nudge'), events: ['ticket.created'] } },
    });
    expect(made.status).toBe(201);
    const hook = receiver().endpoint('/nudge', made.body.webhook.signingSecret);
    let writes = 0;
    const stop = lambda.afterWrites(() => writes++);
    try {
      // Each of these counts against the rate limit (an UpdateItem of the counters' table) and writes nothing else.
      for (const path of ['/playbook/api/v1/users/me', '/helpdesk/api/v1/tickets', '/helpdesk/api/v1/webhooks']) {
        expect((await client.request('GET', path, { token: acct.ownerKey })).status).toBe(200);
      }
      expect(writes).toBe(0);

      const created = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject: 'Read me now' } } });
      expect(created.status).toBe(201);
      expect(writes).toBeGreaterThan(0);
      // Delivered through the stream read the write started: the idle poll would come in ten minutes.
      await eventually(() => hook.received.length > 0, 15_000, 'the ticket.created delivery');
      expect(hook.received).toHaveLength(1);
    } finally {
      stop();
    }
  });
});
