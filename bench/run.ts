/**
 * `npm run bench`: per-endpoint DynamoDB cost and latency through the local
 * gateway, beside the time of the bare DynamoDB calls made in the same run,
 * plus each function's bundle size and cold import time.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../local/ports.ts';
import { build } from 'esbuild';
import { ensureTable, startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { configureLocalEnv, LOCAL_TABLE } from '../local/stack.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200);
/** BENCH_ONLY=automations runs only that section (after the shared seeding). */
const ONLY = process.env.BENCH_ONLY;
const WARMUP = 20;


const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (n: number, d = 2) => n.toFixed(d);

process.env.DDB_STATS = '1';
process.env.LOG_LEVEL = 'silent';
const dynamo = await startDynamoDbLocal(await freePort());
configureLocalEnv({ dynamodbEndpoint: dynamo.endpoint, sessionSecret: 'bench-secret-bench-secret-bench-secret-0123456789' });
await ensureTable(dynamo.endpoint, LOCAL_TABLE);
const { startGateway } = await import('../local/gateway.ts');
const { resetDdbStats } = await import('../shared/db/stats.ts');
const accounts = await import('../shared/accounts/service.ts');
const gw = await startGateway(0);

const acct = await accounts.createAccount({ name: 'Bench', plan: 'enterprise', ownerEmail: 'owner@bench.example' });
const session = (await accounts.issueSessionToken(acct.accountId, acct.owner.id)).token;
const call = async (method: string, path: string, body?: unknown, token = acct.apiKey) => {
  const res = await fetch(gw.url + path, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path} -> ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
};

// Seed: 60 users to list and read.
const seeded: string[] = [];
for (let i = 0; i < 60; i++) seeded.push((await call('POST', '/playbook/api/v1/users', { email: `seed${i}@bench.example`, name: `Seed ${i}` })).id);
const firstPage = await call('GET', '/playbook/api/v1/users?limit=20');
const tickets: string[] = [];
for (let i = 0; i < 60; i++) tickets.push((await call('POST', '/helpdesk/api/v1/tickets', { ticket: { subject: `Seed ${i}`, requesterEmail: `customer${i % 20}@bench-co.example` } })).ticket.id);
await call('POST', '/helpdesk/api/organizations', { name: 'Bench Co', organizationalDomain: 'bench-co.example' });
for (let i = 0; i < 40; i++) await call('POST', '/helpdesk/api/contacts', { name: `Person ${i}`, email: `person${i}@bench-co.example` });

let n = 0;
const scenarios: Array<{ name: string; run: () => Promise<unknown> }> = [
  { name: 'GET /users/me', run: () => call('GET', '/playbook/api/v1/users/me') },
  { name: 'GET /users/{id}', run: () => call('GET', `/playbook/api/v1/users/${seeded[n++ % seeded.length]}`) },
  { name: 'GET /users (page 1, limit 20, counts total)', run: () => call('GET', '/playbook/api/v1/users?limit=20') },
  { name: 'GET /users (next page via cursor)', run: () => call('GET', `/playbook/api/v1/users?limit=20&cursor=${encodeURIComponent(firstPage.pagination.next_cursor)}`) },
  { name: 'POST /users', run: () => call('POST', '/playbook/api/v1/users', { email: `new${n++}@bench.example`, name: 'New User' }) },
  { name: 'PATCH /users/{id}', run: () => call('PATCH', `/playbook/api/v1/users/${seeded[n++ % seeded.length]}`, { name: `Renamed ${n}` }) },
  { name: 'POST /v1/tickets (new requester)', run: () => call('POST', '/helpdesk/api/v1/tickets', { ticket: { subject: 'Bench', requesterEmail: `new${n++}@elsewhere.example` } }) },
  { name: 'POST /v1/tickets (known requester)', run: () => call('POST', '/helpdesk/api/v1/tickets', { ticket: { subject: 'Bench', requesterEmail: 'customer1@bench-co.example' } }) },
  { name: 'GET /v1/tickets/{id}', run: () => call('GET', `/helpdesk/api/v1/tickets/${tickets[n++ % tickets.length]}`) },
  { name: 'GET /v1/tickets (page of 25)', run: () => call('GET', '/helpdesk/api/v1/tickets') },
  // Each pass over the tickets flips the value, so every call really changes the ticket.
  { name: 'PUT /v1/tickets/{id}', run: () => call('PUT', `/helpdesk/api/v1/tickets/${tickets[n % tickets.length]}`, { ticket: { priority: Math.floor(n++ / tickets.length) % 2 ? 'high' : 'low' } }) },
  { name: 'GET /contacts (page of 15)', run: () => call('GET', '/helpdesk/api/contacts') },
  { name: 'GET /contacts?search=', run: () => call('GET', '/helpdesk/api/contacts?search=person1') },
  { name: 'POST /messages (with ticket_update)', run: () => call('POST', '/helpdesk/api/messages', { ticket_id: tickets[n % tickets.length], type: 'note', content: '<p>Note</p>', ticket_update: { priority: Math.floor(n++ / tickets.length) % 2 ? 'urgent' : 'normal' } }, session) },
];

if (!ONLY) console.log(`\nEndpoints: ${ITERATIONS} warm calls each through the local gateway (DynamoDB Local, in memory)\n`);
if (!ONLY) console.log('Fixed cost per authenticated call: authorizer GetItem (API key hash) + BatchGetItem (user, account) + UpdateItem (rate-limit window).');
if (!ONLY) console.log('"bare DDB" is the summed time of the DynamoDB calls a request made (calls made in parallel can sum to more than the wall time).\n');
const rows: string[][] = [['endpoint', 'DDB req/call', 'by command', 'capacity/call', 'p50 ms', 'p99 ms', 'bare DDB p50 ms', 'overhead vs bare']];
for (const s of ONLY ? [] : scenarios) {
  for (let i = 0; i < WARMUP; i++) await s.run();
  resetDdbStats();
  const lat: number[] = [];
  const ddbMs: number[] = [];
  const totals = { requests: 0, capacity: 0, byCommand: {} as Record<string, number> };
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now();
    await s.run();
    lat.push(performance.now() - t0);
    const st = resetDdbStats();
    ddbMs.push(st.millis);
    totals.requests += st.requests;
    totals.capacity += st.capacityUnits;
    for (const [k, v] of Object.entries(st.byCommand)) totals.byCommand[k] = (totals.byCommand[k] ?? 0) + v;
  }
  const p50 = pct(lat, 50);
  const bare = pct(ddbMs, 50);
  rows.push([
    s.name,
    fmt(totals.requests / ITERATIONS, 1),
    Object.entries(totals.byCommand).map(([k, v]) => `${k}×${fmt(v / ITERATIONS, 1)}`).join(' '),
    fmt(totals.capacity / ITERATIONS, 1),
    fmt(p50),
    fmt(pct(lat, 99)),
    fmt(bare),
    `${fmt(((p50 - bare) / bare) * 100, 0)}%`,
  ]);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
if (!ONLY) for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));

if (!ONLY || ONLY === 'automations') {
  const { benchAutomations } = await import('./automations.ts');
  await benchAutomations(call, { accountId: acct.accountId, userId: acct.owner.id, role: 'owner', plan: 'enterprise', credential: 'api_key' });
}

// --- Pipeline (bench/pipeline.ts): raw transaction rate, burst throughput and latency, a quiet tenant beside a noisy one.
await (await import('./pipeline.ts')).runPipelineBench({ dynamodbEndpoint: dynamo.endpoint, gatewayUrl: gw.url, tableName: LOCAL_TABLE });

await gw.close();
await dynamo.stop();

// Bundles: what each Lambda ships, and how long a cold import of it takes.
const { API_GROUPS, AUTHORIZER, NOT_FOUND } = await import('../functions/registry.ts');
const outDir = mkdtempSync(join(tmpdir(), 'bench-bundles-'));
const entries = [...API_GROUPS.map((g) => ({ name: g.name, entry: g.entry })), { name: 'authorizer', entry: AUTHORIZER.entry }, { name: 'notFound', entry: NOT_FOUND.entry }];
if (!ONLY) console.log('\nFunction bundles (esbuild, minified ESM, node24; goal < 1 MB):\n');
const bundleRows = [['function', 'bundle KB', 'cold import ms (median of 5)']];
for (const e of ONLY ? [] : entries) {
  const outfile = join(outDir, `${e.name}.mjs`);
  await build({
    entryPoints: [e.entry],
    bundle: true,
    minify: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    outfile,
    banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
    logLevel: 'silent',
  });
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const r = spawnSync(process.execPath, ['-e', `const t=performance.now();await import(${JSON.stringify(outfile)});console.log(performance.now()-t)`, '--input-type=module'], {
      env: { ...process.env, TABLE_NAME: 't', AWS_REGION: 'us-east-1', SESSION_SECRET_ARN: 'arn:bench', DDB_STATS: '0' },
      encoding: 'utf8',
    });
    times.push(Number(r.stdout.trim()));
  }
  bundleRows.push([e.name, fmt(statSync(outfile).size / 1024, 1), fmt(pct(times, 50), 1)]);
}
const bw = bundleRows[0].map((_, i) => Math.max(...bundleRows.map((r) => r[i].length)));
if (!ONLY) for (const r of bundleRows) console.log(r.map((c, i) => c.padEnd(bw[i])).join('  '));

