import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';

const { client } = useGateway();
const BASE = '/helpdesk/api/v1/webhooks';
const valid = { name: 'Ops', targetUrl: 'https://hooks.example.com/desk', events: ['ticket.created', 'ticket.resolved'] };

describe('webhooks API', () => {
  it('creates a webhook with a signing secret shown only in the create answer', async () => {
    // Arrange
    const acct = await createTestAccount();
    // Act
    const created = await client.request('POST', BASE, { token: acct.ownerKey, body: { webhook: valid } });
    // Assert
    expect(created.status).toBe(201);
    expect(created.body.webhook).toMatchObject({ ...valid, active: true, id: expect.stringMatching(/^whk_/) });
    expect(created.body.webhook.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.body.webhook.signingSecret.slice(6), 'base64')).toHaveLength(32);
    const id = created.body.webhook.id;
    const got = await client.request('GET', `${BASE}/${id}`, { token: acct.ownerKey });
    expect(got.status).toBe(200);
    expect(got.body.webhook).toEqual({ ...valid, id, active: true, disabledReason: null, signingSecretRotatedAt: null, createdAt: expect.any(String), updatedAt: expect.any(String) });
    const list = await client.request('GET', BASE, { token: acct.ownerKey });
    expect(list.body).toEqual({ webhooks: [got.body.webhook] });
  });

  it('updates only the given fields, including an https targetUrl, and deletes', async () => {
    const acct = await createTestAccount();
    const { body } = await client.request('POST', BASE, { token: acct.ownerKey, body: { webhook: { ...valid, active: false } } });
    const id = body.webhook.id;
    expect(body.webhook.active).toBe(false);

    const renamed = await client.request('PUT', `${BASE}/${id}`, { token: acct.ownerKey, body: { webhook: { name: 'Renamed', active: true } } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.webhook).toMatchObject({ name: 'Renamed', active: true, targetUrl: valid.targetUrl, events: valid.events });
    expect(renamed.body.webhook.signingSecret).toBeUndefined();

    const moved = await client.request('PUT', `${BASE}/${id}`, { token: acct.ownerKey, body: { webhook: { targetUrl: 'https://other.example.com/x', events: ['ticket.deleted'] } } });
    expect(moved.body.webhook).toMatchObject({ name: 'Renamed', targetUrl: 'https://other.example.com/x', events: ['ticket.deleted'] });

    const del = await client.request('DELETE', `${BASE}/${id}`, { token: acct.ownerKey });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await client.request('GET', `${BASE}/${id}`, { token: acct.ownerKey })).status).toBe(404);
    expect((await client.request('DELETE', `${BASE}/${id}`, { token: acct.ownerKey })).status).toBe(404);
  });

  it.each([
    ['an http targetUrl', { ...valid, targetUrl: 'http://hooks.example.com/x' }, 'targetUrl'],
    ['a targetUrl that is not a URL', { ...valid, targetUrl: 'not a url' }, 'targetUrl'],
    ['credentials in the targetUrl', { ...valid, targetUrl: 'https://u:p@hooks.example.com/' }, 'targetUrl'],
    ['an empty events array', { ...valid, events: [] }, 'events'],
    ['an unknown event name', { ...valid, events: ['ticket.exploded'] }, 'events.0'],
    ['events that is not an array', { ...valid, events: 'ticket.created' }, 'events'],
    ['a missing name', { targetUrl: valid.targetUrl, events: valid.events }, 'name'],
    ['a non-boolean active', { ...valid, active: 'yes' }, 'active'],
  ])('refuses %s with 422 VALIDATION_ERROR naming the field', async (_what, webhook, field) => {
    const acct = await createTestAccount();
    const res = await client.request('POST', BASE, { token: acct.ownerKey, body: { webhook } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('refuses an update to http or to empty events with 422 and leaves the webhook unchanged', async () => {
    const acct = await createTestAccount();
    const { body } = await client.request('POST', BASE, { token: acct.ownerKey, body: { webhook: valid } });
    const bad = await client.request('PUT', `${BASE}/${body.webhook.id}`, { token: acct.ownerKey, body: { webhook: { targetUrl: 'http://x.example.com' } } });
    expect(bad.status).toBe(422);
    const empty = await client.request('PUT', `${BASE}/${body.webhook.id}`, { token: acct.ownerKey, body: { webhook: { events: [] } } });
    expect(empty.status).toBe(422);
    const got = await client.request('GET', `${BASE}/${body.webhook.id}`, { token: acct.ownerKey });
    expect(got.body.webhook).toMatchObject(valid);
  });

  it('answers 400 BAD_REQUEST for a missing wrapper, a non-object body and malformed JSON', async () => {
    const acct = await createTestAccount();
    const noWrapper = await client.request('POST', BASE, { token: acct.ownerKey, body: valid });
    expect(noWrapper.status).toBe(400);
    expect(noWrapper.body.error.code).toBe('BAD_REQUEST');
    const { body } = await client.request('POST', BASE, { token: acct.ownerKey, body: { webhook: valid } });
    const putNoWrapper = await client.request('PUT', `${BASE}/${body.webhook.id}`, { token: acct.ownerKey, body: { name: 'x' } });
    expect(putNoWrapper.status).toBe(400);
    expect((await client.request('POST', BASE, { token: acct.ownerKey, body: [valid] })).status).toBe(400);
    const malformed = await client.request('POST', BASE, { token: acct.ownerKey, rawBody: '{"webhook": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('BAD_REQUEST');
  });

  it('needs the admin role: agents and viewers get 403, no credentials 401', async () => {
    const acct = await createTestAccount();
    const agent = await acct.addUser('member');
    const viewer = await acct.addUser('viewer');
    const admin = await acct.addUser('admin');
    for (const key of [agent.key, viewer.key]) {
      expect((await client.request('GET', BASE, { token: key })).status).toBe(403);
      const res = await client.request('POST', BASE, { token: key, body: { webhook: valid } });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
    expect((await client.request('GET', BASE)).status).toBe(401);
    expect((await client.request('POST', BASE, { token: admin.key, body: { webhook: valid } })).status).toBe(201);
  });

  it("hides other accounts' webhooks: 404 NOT_FOUND on get, update, delete, deliveries", async () => {
    const mine = await createTestAccount();
    const theirs = await createTestAccount();
    const { body } = await client.request('POST', BASE, { token: theirs.ownerKey, body: { webhook: valid } });
    const id = body.webhook.id;
    for (const [method, path, payload] of [
      ['GET', `${BASE}/${id}`, undefined],
      ['PUT', `${BASE}/${id}`, { webhook: { name: 'x' } }],
      ['DELETE', `${BASE}/${id}`, undefined],
      ['GET', `${BASE}/${id}/deliveries`, undefined],
      ['POST', `${BASE}/${id}/deliveries/dlv_X/redeliver`, undefined],
    ] as const) {
      const res = await client.request(method, path, { token: mine.ownerKey, body: payload });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    }
    expect((await client.request('GET', BASE, { token: mine.ownerKey })).body).toEqual({ webhooks: [] });
    expect((await client.request('GET', `${BASE}/${id}`, { token: theirs.ownerKey })).status).toBe(200);
  });

  it('lists an empty delivery log for a new webhook and 400s an invalid limit', async () => {
    const acct = await createTestAccount();
    const { body } = await client.request('POST', BASE, { token: acct.ownerKey, body: { webhook: valid } });
    const log = await client.request('GET', `${BASE}/${body.webhook.id}/deliveries`, { token: acct.ownerKey });
    expect(log.status).toBe(200);
    expect(log.body).toEqual({ deliveries: [] });
    const bad = await client.request('GET', `${BASE}/${body.webhook.id}/deliveries?limit=0`, { token: acct.ownerKey });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('BAD_REQUEST');
    const missing = await client.request('POST', `${BASE}/${body.webhook.id}/deliveries/dlv_nope/redeliver`, { token: acct.ownerKey });
    expect(missing.status).toBe(404);
  });
});
