import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';
import { setEnrichmentProvider } from '../support/lambda.ts';

const { client } = useGateway();
const ORGS = '/helpdesk/api/organizations';

// A stand-in company-data API: /ok answers facts, /fail 500, /slow never answers (only the provider's timeout ends the call).
let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/ok'))
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'Remote Co', country: 'Norway', employeeCount: 42, logoUrl: 'https://remote.example/logo.png' }));
    if (req.url?.startsWith('/fail')) return res.writeHead(500).end();
    // Anything else (/slow) gets no answer.
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

async function newOrg(domain: string, name?: string) {
  const acct = await createTestAccount();
  const res = await client.request('POST', ORGS, { token: acct.ownerKey, body: { organizationalDomain: domain, ...(name ? { name } : {}) } });
  return { token: acct.ownerKey, id: res.body.data.id as string };
}
const enrich = (o: { token: string; id: string }) => client.request('POST', `${ORGS}/${o.id}/enrich`, { token: o.token });

describe('POST /organizations/:id/enrich', () => {
  it('fills company facts from the file provider, keeping a name set by hand', async () => {
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'file', ENRICHMENT_FILE: 'data/companies.json' });
    const o = await newOrg('shopify.com', 'Shopify (our account)');
    const res = await enrich(o);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Shopify (our account)', country: 'Canada', industry: 'E-commerce Software', employeeCount: '8300', yearlyRevenue: '7.1B USD' });
    const unnamed = await newOrg('ikea.com');
    expect((await enrich(unnamed)).body.data.name).toBe('IKEA');
  });

  it('changes nothing, and still answers 200, with no provider or no data for the domain', async () => {
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'none' });
    const none = await enrich(await newOrg('apple.com'));
    expect(none.status).toBe(200);
    expect(none.body.data).toMatchObject({ name: null, country: null, industry: null, employeeCount: null, yearlyRevenue: null, logoUrl: null });
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'file', ENRICHMENT_FILE: 'data/companies.json' });
    const unknown = await enrich(await newOrg('unknown-company.example'));
    expect(unknown.body.data.country).toBeNull();
  });

  it('uses the HTTP provider, and leaves the record unchanged when it fails or times out', async () => {
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'http', ENRICHMENT_URL: `${base}/ok`, ENRICHMENT_API_KEY: 'key', ENRICHMENT_TIMEOUT_MS: '500' });
    const ok = await enrich(await newOrg('remote.example'));
    expect(ok.body.data).toMatchObject({ name: 'Remote Co', country: 'Norway', employeeCount: '42', logoUrl: 'https://remote.example/logo.png' });
    for (const path of ['/fail', '/slow']) {
      await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'http', ENRICHMENT_URL: `${base}${path}`, ENRICHMENT_TIMEOUT_MS: '300' });
      const res = await enrich(await newOrg('broken.example'));
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ name: null, country: null });
    }
  });

  it('answers 404 for an organization of another account', async () => {
    const o = await newOrg('mine.example');
    const other = await createTestAccount();
    const res = await client.request('POST', `${ORGS}/${o.id}/enrich`, { token: other.ownerKey });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});
