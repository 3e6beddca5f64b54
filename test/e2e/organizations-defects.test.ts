import { describe, expect, it } from 'vitest';
import { handler as organizationConsumer } from '#functions/enrichment/handler.ts';
import { newDomainEvent } from '#shared/events/outbox.ts';
import { ORGANIZATION_DELETED, ORGANIZATION_EVENT_SOURCE } from '#shared/organizations/events.ts';
import { unlinkOrganizationContacts } from '#shared/contacts/organization-unlink.ts';
import { createTestAccount, useGateway } from '../support/api.ts';
import { as, CONTACTS, counts, expectDeskError, getContact, inBatches, must, newContact, newOrg, newTicket, ORGS, storedContact, TICKETS } from '../support/helpdesk.ts';
import { deleteOrganizationInStore } from '../support/store.ts';

const { client } = useGateway();

async function setup() {
  const acct = await createTestAccount();
  return { acct, d: as(client, acct.ownerKey) };
}

/** The organization.deleted event as the SQS consumer receives it from the bus. */
const deliver = (accountId: string, orgId: string) => {
  const detail = newDomainEvent(accountId, ORGANIZATION_DELETED, { organization: { id: orgId } });
  const body = JSON.stringify({ id: detail.eventId, source: ORGANIZATION_EVENT_SOURCE, 'detail-type': ORGANIZATION_DELETED, time: detail.timestamp, detail });
  return organizationConsumer({ Records: [{ messageId: detail.eventId, body } as never] });
};

describe('organization delete leaves nothing that breaks later writes', () => {
  it('contacts still naming a deleted organization (crash before unlinking) accept ticket and contact writes; the consumer finishes the unlinking', async () => {
    const { d, acct } = await setup();
    const o = await newOrg(d, { name: 'Gone', organizationalDomain: 'gone.example' });
    const people = await inBatches(4, 4, (i) => newContact(d, { name: `G${i}`, email: `g${i}@gone.example` }));
    const t = await newTicket(d, { requesterEmail: 'g0@gone.example' });
    // The state a crash right after the delete transaction leaves: organization gone, contacts still linked.
    await deleteOrganizationInStore(acct.accountId, o.id);
    expect((await storedContact(acct.accountId, people[0].id)).organizationId).toBe(o.id);

    must(await d.post(TICKETS, { ticket: { subject: 'after', requesterEmail: 'g1@gone.example' } }), 201, 'ticket for a stale-linked requester');
    must(await d.put(`${TICKETS}/${t.id}`, { ticket: { requesterEmail: 'g2@gone.example' } }), 200, 'move a ticket between stale-linked requesters');
    expect((await d.del(`${TICKETS}/${t.id}`)).status).toBe(204);
    must(await d.patch(`${CONTACTS}/${people[1].id}`, { name: 'Renamed' }), 200, 'update a stale-linked contact');
    expect((await d.del(`${CONTACTS}/${people[3].id}`)).status).toBe(204);
    // The update dropped the dead link.
    expect((await storedContact(acct.accountId, people[1].id)).organizationId).toBeNull();

    expect(await deliver(acct.accountId, o.id)).toEqual({ batchItemFailures: [] });
    for (const p of people.slice(0, 3)) expect((await storedContact(acct.accountId, p.id)).organizationId).toBeNull();
    // A new organization with the same domain starts from zero and later writes count normally.
    const again = await newOrg(d, { name: 'Back', organizationalDomain: 'gone.example' });
    must(await d.patch(`${CONTACTS}/${people[0].id}`, { organizationId: again.id }), 200, 'link to the new organization');
    await newTicket(d, { requesterEmail: 'g0@gone.example' });
    expect(await counts(d, again.id)).toEqual({ contactCount: 1, ticketCount: 1 });
  });

  it('the unlinking is bounded per call and resumes where it stopped', async () => {
    const { d, acct } = await setup();
    const o = await newOrg(d, { name: 'Many', organizationalDomain: 'many.example' });
    const people = await inBatches(25, 10, (i) => newContact(d, { name: `M${i}`, email: `m${i}@many.example` }));
    await deleteOrganizationInStore(acct.accountId, o.id);

    expect(await unlinkOrganizationContacts(acct.accountId, o.id, 10)).toBe(false);
    const linked = async () => (await Promise.all(people.map((p) => storedContact(acct.accountId, p.id)))).filter((c) => c.organizationId).length;
    expect(await linked()).toBe(15);
    expect(await unlinkOrganizationContacts(acct.accountId, o.id)).toBe(true);
    expect(await linked()).toBe(0);
    expect((await getContact(d, people[0].id)).organizationId).toBeNull();
  });
});

describe('organization PATCH is versioned', () => {
  it('20 concurrent domain changes all land in turn and leave exactly one domain guard', async () => {
    const { d } = await setup();
    const o = await newOrg(d, { name: 'Race', organizationalDomain: 'race0.example' });
    const domains = Array.from({ length: 20 }, (_, i) => `race${i + 1}.example`);

    const res = await Promise.all(domains.map((dom) => d.patch(`${ORGS}/${o.id}`, { organizationalDomain: dom })));

    expect(res.map((r) => r.status)).toEqual(Array(20).fill(200));
    const final = (await d.get(`${ORGS}/${o.id}`)).body.data.organizationalDomain;
    expect(domains).toContain(final);
    // Every other domain (and the original) is free: no orphan guard answers 409.
    for (const dom of ['race0.example', ...domains]) {
      const created = await d.post(ORGS, { organizationalDomain: dom });
      if (dom === final) expectDeskError(created, 409, 'CONFLICT');
      else expect(created.status, `${dom}: ${created.text}`).toBe(201);
    }
  });
});
