/** Organizations: create and its validation, the list (search, sort, pages) and enrichment from a company-data provider. */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';
import { setEnrichmentProvider } from '../support/lambda.ts';
import { as, expectBadQuery, expectDeskError, expectValidation, getOrg, inBatches, must, newContact, newOrg, ORGS, walkPages, type Api, type Json } from '../support/helpdesk.ts';

const { client } = useGateway();

async function setup() {
  const acct = await createTestAccount();
  return { acct, d: as(client, acct.ownerKey) };
}

const list = async (d: Api, query: string) => must(await d.get(`${ORGS}?${query}`), 200, `list ${query}`);
const domains = (items: Json[]) => items.map((o) => o.organizationalDomain);

describe('organization create and validation', () => {
  it('creates an organization: 201, domain stored lowercased, enrichment fields null, counts 0', async () => {
    const { d } = await setup();

    const res = await d.post(ORGS, { name: 'Acme', organizationalDomain: 'ACME.com' });

    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(/^org_/),
        name: 'Acme',
        organizationalDomain: 'acme.com',
        country: null,
        industry: null,
        employeeCount: null,
        yearlyRevenue: null,
        logoUrl: null,
        contactCount: 0,
        ticketCount: 0,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      },
    });
    expect(await getOrg(d, res.body.data.id)).toEqual(res.body.data);
  });

  it('name is optional (null)', async () => {
    const { d } = await setup();

    const res = await d.post(ORGS, { organizationalDomain: 'nameless.example' });

    expect(res.status).toBe(201);
    expect(res.body.data.name).toBeNull();
  });

  it.each(['http://acme.com', 'acme.com/x', 'a b.com', 'acme..com', '', '.acme.com', 'acme.com.', '-acme.com', 'acme_corp.com', 'user@acme.com', 'acme.com:8080'])(
    'refuses the domain %j with 422 VALIDATION_ERROR naming organizationalDomain',
    async (domain) => {
      const { d } = await setup();

      const res = await d.post(ORGS, { name: 'Bad', organizationalDomain: domain });

      expectValidation(res, 'organizationalDomain');
      expect((await list(d, '')).meta.total).toBe(0);
    },
  );

  it('refuses a missing or non-string domain with 422', async () => {
    const { d } = await setup();

    expectValidation(await d.post(ORGS, { name: 'No domain' }), 'organizationalDomain');
    expectValidation(await d.post(ORGS, { organizationalDomain: 42 }), 'organizationalDomain');
  });

  it('accepts name and domain of exactly 128 characters and refuses 129 or more with 422', async () => {
    const { d } = await setup();
    const domain128 = `${'a'.repeat(63)}.${'b'.repeat(60)}.com`;
    const domain131 = `${'a'.repeat(63)}.${'b'.repeat(63)}.com`;
    expect(domain128).toHaveLength(128);

    const okName = await d.post(ORGS, { name: 'n'.repeat(128), organizationalDomain: 'name128.example' });
    const okDomain = await d.post(ORGS, { organizationalDomain: domain128 });
    const longName = await d.post(ORGS, { name: 'n'.repeat(129), organizationalDomain: 'name129.example' });
    const longDomain = await d.post(ORGS, { organizationalDomain: domain131 });
    const patchLongName = await d.patch(`${ORGS}/${okName.body.data.id}`, { name: 'm'.repeat(129) });

    expect(okName.status).toBe(201);
    expect(okDomain.status).toBe(201);
    expectValidation(longName, 'name');
    expectValidation(longDomain, 'organizationalDomain');
    expectValidation(patchLongName, 'name');
    expect((await list(d, '')).meta.total).toBe(2);
  });

  it('refuses a duplicate domain, whatever its case, with 409 CONFLICT (create and update)', async () => {
    const { d } = await setup();
    await newOrg(d, { name: 'Acme', organizationalDomain: 'acme.com' });
    const other = await newOrg(d, { name: 'Other', organizationalDomain: 'other.com' });

    const dupCreate = await d.post(ORGS, { name: 'Acme 2', organizationalDomain: 'ACME.COM' });
    const dupUpdate = await d.patch(`${ORGS}/${other.id}`, { organizationalDomain: 'Acme.com' });

    expectDeskError(dupCreate, 409, 'CONFLICT');
    expectDeskError(dupUpdate, 409, 'CONFLICT');
    expect((await getOrg(d, other.id)).organizationalDomain).toBe('other.com');
    expect((await list(d, '')).meta.total).toBe(2);
  });

  it('the same domain may exist in two accounts', async () => {
    const { d } = await setup();
    const other = await createTestAccount();
    await newOrg(d, { organizationalDomain: 'shared.example' });

    const res = await as(client, other.ownerKey).post(ORGS, { organizationalDomain: 'shared.example' });

    expect(res.status).toBe(201);
  });
});

describe('GET /organizations: search, sort, pages', () => {
  it('search matches name or domain, case-insensitively', async () => {
    const { d } = await setup();
    await newOrg(d, { name: 'Acme Rockets', organizationalDomain: 'acme.example' });
    await newOrg(d, { name: 'Globex', organizationalDomain: 'globex-rockets.example' });
    await newOrg(d, { name: 'Initech', organizationalDomain: 'initech.example' });

    const rockets = await list(d, 'search=ROCKETS&sort_by=name&sort_order=asc');
    const byDomain = await list(d, 'search=initech.EXAMPLE');

    expect(rockets.data.map((o: Json) => o.name)).toEqual(['Acme Rockets', 'Globex']);
    expect(rockets.meta).toEqual({ page: 1, limit: 15, total: 2, totalPages: 1 });
    expect(byDomain.data.map((o: Json) => o.name)).toEqual(['Initech']);
  });

  it('sorts by name, organizational_domain, created_at and contact_count, both directions (default created_at desc)', async () => {
    const { d } = await setup();
    // Creation order, names, domains and contact counts each give a different order.
    const specs = [
      { name: 'Delta', organizationalDomain: 'b-delta.example', contacts: 1 },
      { name: 'alpha', organizationalDomain: 'd-alpha.example', contacts: 3 },
      { name: 'Charlie', organizationalDomain: 'a-charlie.example', contacts: 0 },
      { name: 'bravo', organizationalDomain: 'c-bravo.example', contacts: 2 },
    ];
    for (const { contacts, ...o } of specs) {
      await newOrg(d, o);
      for (let i = 0; i < contacts; i++) await newContact(d, { name: `P${i}`, email: `p${i}@${o.organizationalDomain}` });
    }
    const nameOf = (items: Json[]) => items.map((o) => o.name);

    const results = Object.fromEntries(
      await Promise.all(
        ['name', 'organizational_domain', 'created_at', 'contact_count'].flatMap((s) =>
          ['asc', 'desc'].map(async (o) => [`${s} ${o}`, nameOf((await list(d, `sort_by=${s}&sort_order=${o}`)).data)] as const),
        ),
      ),
    );
    const byDefault = nameOf((await list(d, '')).data);

    expect(results['name asc']).toEqual(['alpha', 'bravo', 'Charlie', 'Delta']);
    expect(results['name desc']).toEqual(['Delta', 'Charlie', 'bravo', 'alpha']);
    expect(results['organizational_domain asc']).toEqual(['Charlie', 'Delta', 'bravo', 'alpha']);
    expect(results['organizational_domain desc']).toEqual(['alpha', 'bravo', 'Delta', 'Charlie']);
    expect(results['created_at asc']).toEqual(['Delta', 'alpha', 'Charlie', 'bravo']);
    expect(results['created_at desc']).toEqual(['bravo', 'Charlie', 'alpha', 'Delta']);
    expect(results['contact_count asc']).toEqual(['Charlie', 'Delta', 'bravo', 'alpha']);
    expect(results['contact_count desc']).toEqual(['alpha', 'bravo', 'Delta', 'Charlie']);
    expect(byDefault).toEqual(['bravo', 'Charlie', 'alpha', 'Delta']);
  });

  it('walks every page with exact meta, each organization once, in order; with search the meta counts matches only', async () => {
    const { d } = await setup();
    const all = Array.from({ length: 17 }, (_, i) => `org${String(i).padStart(2, '0')}.${i % 3 === 0 ? 'three' : 'walk'}.example`);
    await inBatches(all.length, 6, (i) => newOrg(d, { name: `Org ${i}`, organizationalDomain: all[i] }));

    const asc = await walkPages(d, ORGS, { sort_by: 'organizational_domain', sort_order: 'asc', limit: 5 }, 17);
    const desc = await walkPages(d, ORGS, { sort_by: 'organizational_domain', sort_order: 'desc', limit: 6 }, 17);
    const searched = await walkPages(d, ORGS, { search: 'three', sort_by: 'organizational_domain', sort_order: 'asc', limit: 2 }, 6);
    const byCount = await walkPages(d, ORGS, { sort_by: 'contact_count', limit: 4 }, 17);

    expect(domains(asc)).toEqual([...all].sort());
    expect(domains(desc)).toEqual([...all].sort().reverse());
    expect(domains(searched)).toEqual(all.filter((x) => x.includes('three')).sort());
    expect(new Set(byCount.map((o) => o.id)).size).toBe(17);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['page=0', 'page'],
    ['sort_by=contactCount', 'sort_by'],
    ['sort_order=sideways', 'sort_order'],
  ])('refuses %s with 400 BAD_REQUEST naming the parameter', async (query, field) => {
    const { d } = await setup();

    expectBadQuery(await d.get(`${ORGS}?${query}`), field);
  });
});

// A stand-in company-data API: /ok answers facts, /fail 500, /slow never answers (only the provider's timeout ends the call).
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/ok')) {
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ name: 'Remote Co', country: 'Norway', industry: 'Fjords', employeeCount: 42, yearlyRevenue: '1M NOK', logoUrl: 'https://remote.example/logo.png' }));
    }
    if (req.url?.startsWith('/fail')) return res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'Should not be used', country: 'Nowhere' }));
    // Anything else (/slow) gets no answer.
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const enrich = (d: Api, id: string) => d.post(`${ORGS}/${id}/enrich`, {});
const NULL_FACTS = { country: null, industry: null, employeeCount: null, yearlyRevenue: null, logoUrl: null };

describe('POST /organizations/:id/enrich', () => {
  it('with the file provider fills every company field, and the name when unset', async () => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'file', ENRICHMENT_FILE: 'data/companies.json' });
    const o = await newOrg(d, { organizationalDomain: 'SAP.com' });

    const res = await enrich(d, o.id);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { ...o, name: 'SAP SE', country: 'Germany', industry: 'Enterprise Software', employeeCount: '107000', yearlyRevenue: '31.2B EUR', logoUrl: 'https://logo.clearbit.com/sap.com' },
    });
    expect(await getOrg(d, o.id)).toEqual(res.body.data);
  });

  it('keeps a hand-set name and hand-set company fields; a field the provider lacks stays null', async () => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'file', ENRICHMENT_FILE: 'data/companies.json' });
    const o = await newOrg(d, { name: 'Stripe (billing partner)', organizationalDomain: 'stripe.com' });
    must(await d.patch(`${ORGS}/${o.id}`, { industry: 'Payments' }), 200, 'hand-set industry');

    const res = await enrich(d, o.id);
    const again = await enrich(d, o.id);

    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      name: 'Stripe (billing partner)',
      country: 'United States',
      industry: 'Payments',
      employeeCount: '8000',
      yearlyRevenue: null,
      logoUrl: 'https://logo.clearbit.com/stripe.com',
    });
    expect(again.body.data).toEqual(res.body.data);
  });

  it('with no provider, fields stay null and the call still answers 200', async () => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'none' });
    const o = await newOrg(d, { organizationalDomain: 'apple.com' });

    const res = await enrich(d, o.id);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: o });
  });

  it('with the file provider and an unknown domain, fields stay null and the call answers 200', async () => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'file', ENRICHMENT_FILE: 'data/companies.json' });
    const o = await newOrg(d, { organizationalDomain: 'unknown-company.example' });

    const res = await enrich(d, o.id);

    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ ...o, name: null, ...NULL_FACTS });
  });

  it('with an HTTP provider that answers, fills the fields (numbers as strings)', async () => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'http', ENRICHMENT_URL: `${base}/ok`, ENRICHMENT_API_KEY: 'test-key', ENRICHMENT_TIMEOUT_MS: '1000' });
    const o = await newOrg(d, { organizationalDomain: 'remote.example' });

    const res = await enrich(d, o.id);

    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Remote Co', country: 'Norway', industry: 'Fjords', employeeCount: '42', yearlyRevenue: '1M NOK', logoUrl: 'https://remote.example/logo.png' });
  });

  it.each([
    ['answers 500', '/fail'],
    ['times out', '/slow'],
  ])('with an HTTP provider that %s, the record is unchanged and the call answers 200', async (_what, path) => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'http', ENRICHMENT_URL: `${base}${path}`, ENRICHMENT_TIMEOUT_MS: '300' });
    const o = await newOrg(d, { organizationalDomain: 'broken.example' });

    const res = await enrich(d, o.id);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: o });
    expect(await getOrg(d, o.id)).toEqual(o);
  });

  it('of an unknown organization is 404', async () => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'file', ENRICHMENT_FILE: 'data/companies.json' });

    expectDeskError(await enrich(d, 'org_doesnotexist'), 404, 'NOT_FOUND');
  });
});
