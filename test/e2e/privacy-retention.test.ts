import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/api.ts';
import { insertTicketRecord } from '../support/desk.ts';
import { as, expectDeskError, expectValidation, must, newTicket, TICKETS, type Json } from '../support/helpdesk.ts';
import { usePipeline } from '../support/pipeline.ts';

/**
 * Retention (decisions §23): the setting, and the daily sweep run with its
 * clock moved forward, deleting the tickets closed longer ago than the
 * account keeps them, as a DELETE would, in batches.
 */
const { client } = useGateway();
const { account, pipeline } = usePipeline([]);
const RETENTION = '/helpdesk/api/v1/retention';
const DAY = 86_400_000;

describe('GET/PUT /v1/retention', () => {
  it('keeps closed tickets by default, takes 30-3650 days or null, admins only', async () => {
    const acct = await account();
    const key = as(client, acct.ownerKey);
    expect(must(await key.get(RETENTION), 200, 'get')).toEqual({ retention: { closedTicketsDeleteAfterDays: null } });
    expectValidation(await key.put(RETENTION, { retention: { closedTicketsDeleteAfterDays: 29 } }), 'closedTicketsDeleteAfterDays');
    expectValidation(await key.put(RETENTION, { retention: { closedTicketsDeleteAfterDays: 3651 } }), 'closedTicketsDeleteAfterDays');
    expectDeskError(await key.put(RETENTION, { closedTicketsDeleteAfterDays: 30 }), 400, 'BAD_REQUEST');
    expect(must(await key.put(RETENTION, { retention: { closedTicketsDeleteAfterDays: 90 } }), 200, 'put')).toEqual({ retention: { closedTicketsDeleteAfterDays: 90 } });
    expect(must(await key.get(RETENTION), 200, 'get').retention.closedTicketsDeleteAfterDays).toBe(90);
    expect(must(await key.put(RETENTION, { retention: { closedTicketsDeleteAfterDays: null } }), 200, 'put').retention.closedTicketsDeleteAfterDays).toBeNull();
    const agent = await acct.addUser('member');
    expectDeskError(await as(client, agent.key).get(RETENTION), 403, 'FORBIDDEN');
  });
});

describe('the daily retention sweep', () => {
  it('deletes the tickets closed longer ago than the retention, in batches, as a DELETE would; keeps the rest and other accounts', async () => {
    // Arrange: 30 days; 60 tickets closed now (more than a batch), one closed 5 days later, one open; another account keeps everything
    const acct = await account();
    const key = as(client, acct.ownerKey);
    must(await key.put(RETENTION, { retention: { closedTicketsDeleteAfterDays: 30 } }), 200, 'put');
    const old: Json[] = [];
    for (let i = 0; i < 60; i += 10) old.push(...(await Promise.all(Array.from({ length: 10 }, () => insertTicketRecord(acct.accountId)))));
    const later = new Date(Date.now() + 5 * DAY).toISOString();
    const recent = await insertTicketRecord(acct.accountId, { updatedAt: later });
    const open = await newTicket(key);
    const other = await account();
    const kept = await insertTicketRecord(other.accountId);

    // Act: the sweep as it runs 31 days from now
    const out = (await pipeline().runSchedule('retention-sweep', { time: new Date(Date.now() + 31 * DAY).toISOString() })) as Json;

    // Assert
    expect(out.deleted).toBeGreaterThanOrEqual(60);
    for (const t of [old[0], old[59]]) expectDeskError(await key.get(`${TICKETS}/${t.id}`), 404, 'NOT_FOUND');
    const left = must(await key.get(`${TICKETS}?status=closed&page_size=100`), 200, 'list').tickets as Json[];
    expect(left.map((t) => t.id)).toEqual([recent.id]);
    must(await key.get(`${TICKETS}/${open.id}`), 200, 'open ticket');
    must(await as(client, other.ownerKey).get(`${TICKETS}/${kept.id}`), 200, 'other account');
    const audits = must(await key.get(`${TICKETS}/${old[0].id}/audits`), 200, 'audits').audits as Json[];
    expect(audits.at(-1)).toMatchObject({ via: 'retention', actor: { type: 'system', id: null }, deleted: true, changes: [] });

    // A second run finds nothing more to do
    const again = (await pipeline().runSchedule('retention-sweep', { time: new Date(Date.now() + 31 * DAY).toISOString() })) as Json;
    expect(again.deleted).toBe(0);
  });
});
