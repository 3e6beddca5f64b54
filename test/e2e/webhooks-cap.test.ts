import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';

const { client } = useGateway();
const BASE = '/helpdesk/api/v1/webhooks';
const body = (i: number) => ({ webhook: { name: `Hook ${i}`, targetUrl: `https://hooks${i}.example.com/desk`, events: ['ticket.created'] } });

describe('webhooks per account (decisions §7: at most 100)', () => {
  it('holds the cap of 100 under concurrent creates (422 VALIDATION_ERROR beyond it), and frees a place on delete', async () => {
    const acct = await createTestAccount();
    const post = (i: number) => client.request('POST', BASE, { token: acct.ownerKey, body: body(i) });
    // 110 creates, 16 at a time: exactly 100 succeed whatever the interleaving.
    const statuses: number[] = [];
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < 110) {
          const res = await post(next++);
          statuses.push(res.status);
          if (res.status === 201) ids.push(res.body.webhook.id);
          else expect(res.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR', details: [{ field: 'webhook' }] } });
        }
      }),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(100);
    expect(statuses.filter((s) => s === 422)).toHaveLength(10);
    expect((await client.request('GET', BASE, { token: acct.ownerKey })).body.webhooks).toHaveLength(100);

    expect((await client.request('DELETE', `${BASE}/${ids[0]}`, { token: acct.ownerKey })).status).toBe(204);
    expect((await post(200)).status).toBe(201);
    expect((await post(201)).status).toBe(422);
    // Another account is not affected by this one's webhooks.
    const other = await createTestAccount();
    expect((await client.request('POST', BASE, { token: other.ownerKey, body: body(0) })).status).toBe(201);
  });
});
