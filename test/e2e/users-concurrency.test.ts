import { describe, expect, it } from 'vitest';
import { createTestAccount, uniqueEmail, useGateway } from '../support/api.ts';
import { expectUserError, USERS } from '../support/users.ts';

const { client } = useGateway();

describe('user management under concurrency', () => {
  it('50 parallel creates of one email (in mixed case) give exactly one 201 and 49 × 409 resource_already_exists', async () => {
    const acct = await createTestAccount();
    const email = uniqueEmail('race');

    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => client.request('POST', USERS, { token: acct.ownerKey, body: { email: i % 2 ? email : email.toUpperCase(), name: `Racer ${i}`, send_invitation: false } })),
    );

    expect(results.filter((r) => r.status >= 500)).toEqual([]);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    const losers = results.filter((r) => r.status !== 201);
    expect(losers).toHaveLength(49);
    for (const r of losers) expectUserError(r, 409, 'resource_already_exists');
    const listed = await client.request('GET', `${USERS}?search=${encodeURIComponent(email)}`, { token: acct.ownerKey });
    expect(listed.body.pagination.total_count).toBe(1);
    expect(listed.body.data[0].id).toBe(results.find((r) => r.status === 201)!.body.id);
  });

  it('50 parallel ownership transfers by the owner to 50 different users leave exactly one owner, and no 5xx', async () => {
    const acct = await createTestAccount();
    const targets = await Promise.all(Array.from({ length: 50 }, () => acct.addUser('member')));

    const results = await Promise.all(targets.map((t) => client.request('PATCH', `${USERS}/${t.id}`, { token: acct.ownerKey, body: { role: 'owner' } })));

    expect(results.filter((r) => r.status >= 500).map((r) => r.text)).toEqual([]);
    const winners = results.map((r, i) => (r.status === 200 ? targets[i] : null)).filter((t) => t !== null);
    expect(winners).toHaveLength(1);
    // A loser either lost the race (409) or was authenticated after the winner committed and is now an admin (403).
    for (const r of results.filter((x) => x.status !== 200)) expect([403, 409]).toContain(r.status);
    const owners = await client.request('GET', `${USERS}?role=owner`, { token: targets[0].key });
    expect(owners.body.data.map((u: { id: string }) => u.id)).toEqual([winners[0]!.id]);
    expect(owners.body.pagination.total_count).toBe(1);
    const admins = await client.request('GET', `${USERS}?role=admin`, { token: targets[0].key });
    expect(admins.body.data.map((u: { id: string }) => u.id)).toEqual([acct.ownerId]);
    const members = await client.request('GET', `${USERS}?role=member&limit=100`, { token: targets[0].key });
    expect(members.body.pagination.total_count).toBe(49);
  }, 60_000);

  it('after a contended transfer the new owner can transfer ownership again (the owner guard is consistent)', async () => {
    const acct = await createTestAccount();
    const targets = await Promise.all(Array.from({ length: 10 }, () => acct.addUser('member')));
    const results = await Promise.all(targets.map((t) => client.request('PATCH', `${USERS}/${t.id}`, { token: acct.ownerKey, body: { role: 'owner' } })));
    const winner = targets[results.findIndex((r) => r.status === 200)];

    const back = await client.request('PATCH', `${USERS}/${acct.ownerId}`, { token: winner.key, body: { role: 'owner' } });

    expect(back.status).toBe(200);
    const owners = await client.request('GET', `${USERS}?role=owner`, { token: acct.ownerKey });
    expect(owners.body.data.map((u: { id: string }) => u.id)).toEqual([acct.ownerId]);
  });

  it('20 parallel renames of one user never 5xx, and the stored name, search and name order agree with the last successful write', async () => {
    const acct = await createTestAccount();
    const target = await acct.addUser('member');

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.request('PATCH', `${USERS}/${target.id}`, { token: acct.ownerKey, body: { name: `Concurrent ${String(i).padStart(2, '0')}` } })),
    );

    for (const r of results) expect([200, 409]).toContain(r.status);
    expect(results.filter((r) => r.status === 200).length).toBeGreaterThan(0);
    const stored = (await client.request('GET', `${USERS}/${target.id}`, { token: acct.ownerKey })).body.name as string;
    expect(results.filter((r) => r.status === 200).map((r) => r.body.name)).toContain(stored);
    const found = await client.request('GET', `${USERS}?search=${encodeURIComponent(stored)}`, { token: acct.ownerKey });
    expect(found.body.data.map((u: { id: string }) => u.id)).toEqual([target.id]);
    const stale = await client.request('GET', `${USERS}?search=concurrent`, { token: acct.ownerKey });
    expect(stale.body.pagination.total_count).toBe(1);
    const byName = await client.request('GET', `${USERS}?sort=name&order=asc&search=concurrent`, { token: acct.ownerKey });
    expect(byName.body.data.map((u: { name: string }) => u.name)).toEqual([stored]);
  });

  it('10 parallel deletes of one user give one 204 and 404 resource_not_found for the rest', async () => {
    const acct = await createTestAccount();
    const target = await acct.addUser('member');

    const results = await Promise.all(Array.from({ length: 10 }, () => client.request('DELETE', `${USERS}/${target.id}`, { token: acct.ownerKey })));

    expect(results.filter((r) => r.status === 204)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 204)) expectUserError(r, 404, 'resource_not_found');
  });

  it('a delete racing renames leaves no half-written user behind', async () => {
    const acct = await createTestAccount();
    const target = await acct.addUser('member');
    const email = (await client.request('GET', `${USERS}/${target.id}`, { token: acct.ownerKey })).body.email;

    const results = await Promise.all([
      ...Array.from({ length: 5 }, (_, i) => client.request('PATCH', `${USERS}/${target.id}`, { token: acct.ownerKey, body: { name: `Zombie ${i}` } })),
      client.request('DELETE', `${USERS}/${target.id}`, { token: acct.ownerKey }),
      ...Array.from({ length: 5 }, (_, i) => client.request('PATCH', `${USERS}/${target.id}`, { token: acct.ownerKey, body: { name: `Zombie ${i + 5}` } })),
    ]);

    expect(results.filter((r) => r.status >= 500)).toEqual([]);
    expect(results[5].status).toBe(204);
    expectUserError(await client.request('GET', `${USERS}/${target.id}`, { token: acct.ownerKey }), 404, 'resource_not_found');
    const listed = await client.request('GET', `${USERS}?search=zombie`, { token: acct.ownerKey });
    expect(listed.body.pagination.total_count).toBe(0);
    const recreated = await client.request('POST', USERS, { token: acct.ownerKey, body: { email, name: 'Fresh start' } });
    expect(recreated.status).toBe(201);
  });

  it('30 parallel creates of different emails all succeed and are all listed', async () => {
    const acct = await createTestAccount();
    const emails = Array.from({ length: 30 }, () => uniqueEmail('bulk'));

    const results = await Promise.all(emails.map((email, i) => client.request('POST', USERS, { token: acct.ownerKey, body: { email, name: `Bulk ${i}`, send_invitation: i % 2 === 0 } })));

    expect(results.map((r) => r.status)).toEqual(emails.map(() => 201));
    const list = await client.request('GET', `${USERS}?limit=100&search=bulk`, { token: acct.ownerKey });
    expect(list.body.pagination.total_count).toBe(30);
    expect(new Set(list.body.data.map((u: { id: string }) => u.id))).toEqual(new Set(results.map((r) => r.body.id)));
  });
});
