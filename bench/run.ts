/**
 * `npm run bench`:
 *
 *   - the request path as issue 21 measures it (bench/request-path.ts): the stack as `npm start` runs it in a process of its own against a
 *     one-call floor server in another, wall and CPU per request (from /proc, idle subtracted), GET ticket against a bare GetItem run in a
 *     process of its own, at concurrency 1 and 16;
 *   - the pipeline (bench/pipeline.ts);
 *   - per-endpoint DynamoDB round trips (on the critical path and in total) and latency through the local gateway, beside the bare call of
 *     its access pattern run in a process of its own (with and without the authorizer cache), and GET-ticket throughput at concurrency 16;
 *   - automations, group distribution, search and ticket views as an account grows 30x (bench/growth.ts), and each function's bundle size and
 *     cold import time;
 *   - history (bench/history.ts): the write units and requests a ticket change's audit adds, and the incremental export's
 *     items per second and work per page at 200 and at 6,000 records;
 *   - bulk (bench/bulk.ts): the wall time of a 100-ticket bulk update, from the POST to the job completed;
 *   - merge (bench/merge.ts): the wall time and DynamoDB requests of a merge of a source with 200 messages;
 *   - email (bench/email.ts): the inbound function's DynamoDB requests per mail received over SMTP;
 *
 * and last, one table of the issue's goals beside this run's figures.
 *
 * Apart from the first section, the stack runs in this process (bench/stack.ts),
 * each function from its bundle in its own worker. Their DynamoDB requests are
 * counted by the proxy they reach DynamoDB Local through; bare calls go
 * straight to it, from a process of their own (bench/floor.ts).
 */
import { gatewayCaller } from './http.ts';
import { startBare, type BareCallSpec } from './floor.ts';
import { benchRequestPath, printGoals, type GoalRow } from './request-path.ts';
import { startBenchStack } from './stack.ts';
import { LOCAL_TABLE } from '../local/stack.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200);
/** BENCH_ONLY=requests|endpoints|bill|automations|consumers|groups|pipeline|growth|history|bulk|merge|erasure|views|email|bundles runs only that section (after the shared seeding, none for requests and bundles); `npm run bench:sla` is separate. */
const ONLY = process.env.BENCH_ONLY;
const WARMUP = 20;

// The soak (bench/soak.ts): ten minutes with faults injected, only when asked for (BENCH_ONLY=soak), never in a full run.
if (ONLY === 'soak') {
  const { runSoak } = await import('./soak.ts');
  await runSoak();
  process.exit(0);
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (n: number, d = 2) => n.toFixed(d);

// --- Request path against the one-call floor (bench/request-path.ts): the stack in a process of its own, first, while
// nothing else of the bench runs. Its figures and the pipeline's make the goals table printed at the end.
const goals: GoalRow[] = [];
if (!ONLY || ONLY === 'requests') goals.push(...(await benchRequestPath()));
// Printed on exit, so a section that fails still leaves the rows measured before it (exit handlers run on uncaught errors).
process.on('exit', (code) => {
  const stopped = code ? ` The run stopped early (exit code ${code}): the later sections' rows are missing.` : '';
  if (goals.length) printGoals(`Goals (issues 21, 30 and 42), this run (ratios to the floor server / the bare call, both in processes of their own):${stopped}`, goals);
});
if (ONLY === 'requests') process.exit(0);

const stack = await startBenchStack();
const { dynamo, store, lambda } = stack;
/** The functions' DynamoDB requests since the last call (the proxy's tally), and a new tally. */
const resetDdbStats = () => store.reset();
const accounts = await import('#shared/accounts/service.ts');
const gw = await stack.gateway();

const acct = await accounts.createAccount({ name: 'Bench', plan: 'enterprise', ownerEmail: 'owner@bench.example' });
const session = (await accounts.issueSessionToken(acct.accountId, acct.owner.id)).token;
/** Calls through a gateway as the bench account's owner (API key) unless another token is given. */
const callerVia = (url: string) => {
  const send = gatewayCaller(url);
  return (method: string, path: string, body?: unknown, token: string = acct.apiKey): Promise<any> => send(token, method, path, body);
};
const call = callerVia(gw.url);

// Seed: 60 users to list and read.
const seeded: string[] = [];
for (let i = 0; i < 60; i++) seeded.push((await call('POST', '/playbook/api/v1/users', { email: `seed${i}@bench.example`, name: `Seed ${i}` })).id);
const firstPage = await call('GET', '/playbook/api/v1/users?limit=20');
const tickets: string[] = [];
for (let i = 0; i < 60; i++) tickets.push((await call('POST', '/helpdesk/api/v1/tickets', { ticket: { subject: `Seed ${i}`, requesterEmail: `customer${i % 20}@bench-co.example` } })).ticket.id);
await call('POST', '/helpdesk/api/organizations', { name: 'Bench Co', organizationalDomain: 'bench-co.example' });
for (let i = 0; i < 40; i++) await call('POST', '/helpdesk/api/contacts', { name: `Person ${i}`, email: `person${i}@bench-co.example` });

// Bare calls of each access pattern on the same DynamoDB Local, in a process of their own (bench/floor.ts) with the
// functions' DynamoDB client: measured here, in the process that runs the gateway, the workers' host and the client,
// a baseline is slowed by the very load it is compared with, which flatters the ratio (issue 21).
const { keys } = await import('#shared/db/keys.ts');
const bare = ONLY && ONLY !== 'endpoints' ? undefined : await startBare({ dynamodbEndpoint: dynamo.endpoint, tableName: LOCAL_TABLE, accountId: acct.accountId });
const BARE = {
  GetItem: { kind: 'get', keys: tickets.map((id) => keys.ticket(acct.accountId, id)) },
  query: (size: number) => ({ kind: 'query', pk: keys.accountPk(acct.accountId), prefix: keys.ticketPrefix, limit: size + 1 }),
  TransactWrite2: { kind: 'tx2', pk: `BENCHFLOOR#${acct.accountId}` },
} satisfies Record<string, BareCallSpec | ((size: number) => BareCallSpec)>;

/**
 * What the counting proxy adds to each of the functions' calls: a bare GetItem
 * through it against one straight to DynamoDB Local, both from the bare-call
 * process. The endpoint rows include this per call; the bare calls do not.
 */
async function proxyHop() {
  // In turns of a quarter each, so a load elsewhere on this shared machine falls on both.
  const [d, p]: number[][] = [[], []];
  for (let turn = 0; turn < 4; turn++) {
    d.push(...(await bare!.latency(BARE.GetItem, ITERATIONS / 4, WARMUP)));
    p.push(...(await bare!.latency({ ...BARE.GetItem, endpoint: store.endpoint }, ITERATIONS / 4, WARMUP)));
  }
  store.reset();
  console.log(
    `Counting proxy (the functions' DynamoDB endpoint): a bare GetItem through it p50 ${fmt(pct(p, 50))} ms against ${fmt(pct(d, 50))} ms straight to DynamoDB Local, +${fmt(pct(p, 50) - pct(d, 50))} ms per call in the rows below.`,
  );
}

let n = 0;
interface Scenario {
  name: string;
  run: (c: typeof call) => Promise<unknown>;
  /** The bare call of its access pattern (run in the bare-call process). */
  bare: [string, BareCallSpec];
}
const scenarios: Scenario[] = [
  { name: 'GET /v1/tickets/{id}', run: (c) => c('GET', `/helpdesk/api/v1/tickets/${tickets[n++ % tickets.length]}`), bare: ['GetItem', BARE.GetItem] },
  { name: 'GET /v1/tickets (page of 25)', run: (c) => c('GET', '/helpdesk/api/v1/tickets'), bare: ['Query of 26', BARE.query(25)] },
  { name: 'POST /v1/tickets (no requester)', run: (c) => c('POST', '/helpdesk/api/v1/tickets', { ticket: { subject: 'Bench' } }), bare: ['TransactWrite ×2', BARE.TransactWrite2] },
  {
    name: 'POST /v1/tickets (known requester)',
    run: (c) => c('POST', '/helpdesk/api/v1/tickets', { ticket: { subject: 'Bench', requesterEmail: 'customer1@bench-co.example' } }),
    bare: ['TransactWrite ×2', BARE.TransactWrite2],
  },
  // Each pass over the tickets flips the value, so every call really changes the ticket.
  {
    name: 'PUT /v1/tickets/{id}',
    run: (c) => c('PUT', `/helpdesk/api/v1/tickets/${tickets[n % tickets.length]}`, { ticket: { priority: Math.floor(n++ / tickets.length) % 2 ? 'high' : 'low' } }),
    bare: ['TransactWrite ×2', BARE.TransactWrite2],
  },
  { name: 'GET /users/me', run: (c) => c('GET', '/playbook/api/v1/users/me'), bare: ['GetItem', BARE.GetItem] },
  { name: 'GET /users/me (session token)', run: (c) => c('GET', '/playbook/api/v1/users/me', undefined, session), bare: ['GetItem', BARE.GetItem] },
  { name: 'GET /users/{id}', run: (c) => c('GET', `/playbook/api/v1/users/${seeded[n++ % seeded.length]}`), bare: ['GetItem', BARE.GetItem] },
  { name: 'GET /users (page 1, limit 20, counts total)', run: (c) => c('GET', '/playbook/api/v1/users?limit=20'), bare: ['Query of 21', BARE.query(20)] },
  {
    name: 'GET /users (next page via cursor)',
    run: (c) => c('GET', `/playbook/api/v1/users?limit=20&cursor=${encodeURIComponent(firstPage.pagination.next_cursor)}`),
    bare: ['Query of 21', BARE.query(20)],
  },
  { name: 'POST /users', run: (c) => c('POST', '/playbook/api/v1/users', { email: `new${n++}@bench.example`, name: 'New User' }), bare: ['TransactWrite ×2', BARE.TransactWrite2] },
  { name: 'PATCH /users/{id}', run: (c) => c('PATCH', `/playbook/api/v1/users/${seeded[n++ % seeded.length]}`, { name: `Renamed ${n}` }), bare: ['TransactWrite ×2', BARE.TransactWrite2] },
  { name: 'GET /contacts (page of 15)', run: (c) => c('GET', '/helpdesk/api/contacts'), bare: ['Query of 16', BARE.query(15)] },
  { name: 'GET /contacts?search=', run: (c) => c('GET', '/helpdesk/api/contacts?search=person1'), bare: ['Query of 16', BARE.query(15)] },
  {
    name: 'POST /messages (with ticket_update)',
    run: (c) =>
      c(
        'POST',
        '/helpdesk/api/messages',
        { ticket_id: tickets[n % tickets.length], type: 'note', content: '<p>Note</p>', ticket_update: { priority: Math.floor(n++ / tickets.length) % 2 ? 'urgent' : 'normal' } },
        session,
      ),
    bare: ['TransactWrite ×2', BARE.TransactWrite2],
  },
];

/**
 * Each row runs the endpoint, then its bare call as many times in the
 * bare-call process, so both see about the same machine load (this box is
 * shared); p50 of each and their ratio. The issue's goals are measured
 * against the floor server, in the goals table (bench/request-path.ts).
 */
async function endpointTable(title: string, c: typeof call, only?: string[]) {
  console.log(`\n${title}\n`);
  const rows: string[][] = [['endpoint', 'RT critical path', 'DDB req/call', 'RRU/call', 'WRU/call', 'by command', 'p50 ms', 'p99 ms', 'bare call', 'bare p50 ms (own process)', 'ratio']];
  for (const s of scenarios.filter((x) => !only || only.includes(x.name))) {
    for (let i = 0; i < WARMUP; i++) await s.run(c);
    resetDdbStats();
    const lat: number[] = [];
    const critical: number[] = [];
    const totals = { requests: 0, readUnits: 0, writeUnits: 0, byCommand: {} as Record<string, number> };
    for (let i = 0; i < ITERATIONS; i++) {
      const t0 = performance.now();
      await s.run(c);
      lat.push(performance.now() - t0);
      const st = resetDdbStats();
      critical.push(st.criticalPath);
      totals.requests += st.requests;
      totals.readUnits += st.readUnits;
      totals.writeUnits += st.writeUnits;
      for (const [k, v] of Object.entries(st.byCommand)) totals.byCommand[k] = (totals.byCommand[k] ?? 0) + v;
    }
    const bareMs = await bare!.latency(s.bare[1], ITERATIONS, WARMUP);
    resetDdbStats();
    const ratio = pct(lat, 50) / pct(bareMs, 50);
    rows.push([
      s.name,
      fmt(pct(critical, 50), 0),
      fmt(totals.requests / ITERATIONS, 1),
      fmt(totals.readUnits / ITERATIONS, 1),
      fmt(totals.writeUnits / ITERATIONS, 1),
      Object.entries(totals.byCommand)
        .map(([k, v]) => `${k}×${fmt(v / ITERATIONS, 1)}`)
        .join(' '),
      fmt(pct(lat, 50)),
      fmt(pct(lat, 99)),
      s.bare[0],
      fmt(pct(bareMs, 50)),
      `${fmt(ratio, 1)}×`,
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((col, i) => col.padEnd(widths[i])).join('  '));
}

/** Requests per second with `workers` concurrent callers for `total` calls. */
async function throughput(total: number, workers: number, f: () => Promise<unknown>) {
  let left = total;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (left-- > 0) await f();
    }),
  );
  return total / ((performance.now() - t0) / 1000);
}

// --- Pipeline (bench/pipeline.ts): raw transaction rate, burst throughput and latency, a quiet tenant beside a noisy one.
// The goals table takes its burst and quiet-account p99s from the stack measured from outside (bench/request-path.ts).
if (!ONLY || ONLY === 'pipeline')
  await (await import('./pipeline.ts')).runPipelineBench({ lambda, store, dynamodbEndpoint: dynamo.endpoint, sqsEndpoint: stack.sqs.endpoint, gatewayUrl: gw.url, tableName: LOCAL_TABLE });

if (!ONLY || ONLY === 'endpoints') {
  console.log(
    `\nEndpoints: ${ITERATIONS} warm calls each through the local gateway (DynamoDB Local ${process.env.BENCH_STORE === 'memory' ? 'in memory' : 'on disk, as npm start keeps it'}), then as many bare calls of its access pattern from a process of their own.`,
  );
  console.log('RRU/WRU: the read and write request units DynamoDB bills on demand, per call, as the store reports them (ReturnConsumedCapacity).');
  // Store work as capacity units beside the requests (the proxy adds ReturnConsumedCapacity and reads the answers).
  store.consumedCapacity = true;
  console.log('"RT critical path": DynamoDB round trips in sequence (calls that overlap count once). Authorizer: 1 GetItem (API key) or 1 BatchGetItem (session);');
  console.log("the rate-limit UpdateItem runs beside the route's reads and before its writes.");
  // Warm the store first: a fresh DynamoDB Local answers its first few thousand calls at half speed while its JIT
  // compiles, which would slow whichever rows came first (and their bare calls) and make ratios depend on row order.
  await Promise.all([
    bare!.latency(BARE.GetItem, 1500, 0),
    (async () => {
      for (let i = 0; i < 1500; i++) await call('GET', `/helpdesk/api/v1/tickets/${tickets[i % tickets.length]}`);
    })(),
  ]);
  resetDdbStats();
  await proxyHop();
  await endpointTable("Authorizer cache off (the tests' gateway):", call);

  const cachedGw = await stack.gateway({ authorizerCacheTtlSeconds: 300 });
  const cachedCall = callerVia(cachedGw.url);
  await endpointTable("Authorizer cache on (npm start's default, 300 s; credential changes flush it):", cachedCall, [
    'GET /v1/tickets/{id}',
    'GET /v1/tickets (page of 25)',
    'POST /v1/tickets (no requester)',
    'GET /users/me',
  ]);

  const CONC = 16;
  const TOTAL = Number(process.env.BENCH_THROUGHPUT_CALLS ?? 1600);
  const bareTp = await bare!.throughput(BARE.GetItem, TOTAL, CONC);
  const apiTp = await throughput(TOTAL, CONC, () => call('GET', `/helpdesk/api/v1/tickets/${tickets[n++ % tickets.length]}`));
  const cachedTp = await throughput(TOTAL, CONC, () => cachedCall('GET', `/helpdesk/api/v1/tickets/${tickets[n++ % tickets.length]}`));
  resetDdbStats();
  console.log(
    `\nConcurrency ${CONC} (${TOTAL} calls each): bare GetItem ${fmt(bareTp, 0)}/s; GET /v1/tickets/{id} ${fmt(apiTp, 0)}/s = ${fmt((apiTp / bareTp) * 100, 0)}%; with authorizer cache ${fmt(cachedTp, 0)}/s = ${fmt((cachedTp / bareTp) * 100, 0)}%`,
  );
  await cachedGw.close();
}
await bare?.stop();

// The bill (bench/bill.ts): what a million requests of each endpoint and a million ticket events cost in AWS.
if (!ONLY || ONLY === 'bill') {
  const billGw = await stack.gateway({ authorizerCacheTtlSeconds: 300 });
  const { runBill } = await import('./bill.ts');
  await runBill({
    lambda,
    store,
    dynamodbEndpoint: dynamo.endpoint,
    sqsEndpoint: stack.sqs.endpoint,
    tableName: LOCAL_TABLE,
    gatewayUrl: billGw.url,
    call: callerVia(billGw.url),
    scenarios,
    iterations: Math.min(ITERATIONS, 100),
    createAccount: async () => {
      const a = await accounts.createAccount({ name: 'Bill', plan: 'enterprise', ownerEmail: 'owner@bill.example' });
      return { accountId: a.accountId, apiKey: a.apiKey };
    },
  });
  await billGw.close();
}

if (!ONLY || ONLY === 'automations') {
  const { benchAutomations } = await import('./automations.ts');
  await benchAutomations(call, { accountId: acct.accountId, userId: acct.owner.id, role: 'owner', plan: 'enterprise', credential: 'api_key' }, { lambda, store, sqsEndpoint: stack.sqs.endpoint });
}

if (!ONLY || ONLY === 'consumers') await (await import('./consumers.ts')).benchConsumers({ lambda, store, call });

if (!ONLY || ONLY === 'groups') {
  // Distribution cost per ticket: creates into groups of each mode beside creates without a group, same run.
  const { benchGroupDistribution } = await import('./groups.ts');
  const groupRows = await benchGroupDistribution({ call, accountId: acct.accountId, iterations: Math.min(ITERATIONS, 100), resetDdbStats });
  console.log('\nGroup distribution (ticket create, DynamoDB requests and p50):\n');
  const gw2 = groupRows[0].map((_, i) => Math.max(...groupRows.map((r) => r[i].length)));
  for (const r of groupRows) console.log(r.map((c, i) => c.padEnd(gw2[i])).join('  '));
}

if (!ONLY || ONLY === 'growth') {
  // Issue 20: search and the ticket views as one account grows 30x (items read and requests, beside the time).
  const { runGrowthBench } = await import('./growth.ts');
  await runGrowthBench({
    call,
    store,
    createAccount: async () => {
      const a = await accounts.createAccount({ name: 'Growth', plan: 'enterprise', ownerEmail: 'owner@growth.example' });
      return { accountId: a.accountId, ownerId: a.owner.id, apiKey: a.apiKey };
    },
  });
}

if (!ONLY || ONLY === 'history') {
  // Issue 27: what a ticket change's audit adds to its write, and the incremental export at 200 and at 6,000 records.
  const { runHistoryBench } = await import('./history.ts');
  await runHistoryBench({
    call,
    store,
    dynamodbEndpoint: dynamo.endpoint,
    tableName: LOCAL_TABLE,
    accountId: acct.accountId,
    tickets,
    createAccount: async () => {
      const a = await accounts.createAccount({ name: 'History', plan: 'enterprise', ownerEmail: 'owner@history.example' });
      return { accountId: a.accountId, apiKey: a.apiKey };
    },
  });
}

// Issue 28: a bulk update of 100 tickets; issue 40: erasing a contact of 2,000 tickets; each from the POST to the job completed.
for (const [section, load] of [
  ['bulk', async () => (await import('./bulk.ts')).runBulkBench],
  ['erasure', async () => (await import('./erasure.ts')).runErasureBench],
] as const) {
  if (ONLY && ONLY !== section) continue;
  const createAccount = async () => {
    const a = await accounts.createAccount({ name: section, plan: 'enterprise', ownerEmail: `owner@${section}.example` });
    return { accountId: a.accountId, apiKey: a.apiKey };
  };
  await (
    await load()
  )({ call, store, lambda, dynamodbEndpoint: dynamo.endpoint, sqsEndpoint: stack.sqs.endpoint, tableName: LOCAL_TABLE, createAccount });
}
// Issues 38 and 39: a merge of a source with 200 messages (bench/merge.ts); views' counts and pages (bench/views.ts).
if (!ONLY || ONLY === 'merge') await (await import('./merge.ts')).runMergeBench({ call, store, lambda, dynamodbEndpoint: dynamo.endpoint, sqsEndpoint: stack.sqs.endpoint });
if (!ONLY || ONLY === 'views') await (await import('./views.ts')).runViewsBench({ call, store, lambda, dynamodbEndpoint: dynamo.endpoint, sqsEndpoint: stack.sqs.endpoint });

if (!ONLY || ONLY === 'email') {
  // Issue 29: the inbound function's DynamoDB requests per mail (a new ticket, a reply, a duplicate), mail sent over SMTP.
  const { runEmailBench } = await import('./email.ts');
  await runEmailBench({
    store,
    lambda,
    createAccount: async () => {
      const a = await accounts.createAccount({ name: 'Email', plan: 'enterprise', ownerEmail: 'owner@email.example' });
      return { accountId: a.accountId };
    },
  });
}

// Bundles (bench/bundles.ts): what each function loads at a cold start and on first use, and a cold import of it in a
// fresh Node process with the environment the stack gave the function. BENCH_BUNDLES_BEFORE=<dir> adds another build.
if (!ONLY || ONLY === 'bundles') {
  const { benchBundles, coldStartGoals, printBundles } = await import('./bundles.ts');
  const bench = await benchBundles({ lambda, bundles: stack.bundles, account: { accountId: acct.accountId, apiKey: acct.apiKey, tickets }, beforeDir: process.env.BENCH_BUNDLES_BEFORE });
  printBundles(bench);
  const { rows } = bench;
  // Issues 30 and 42's cold-start goals beside the request path's in the table printed last.
  const overSize = rows.filter((r) => r.initKb > r.goalKb);
  const slowest = rows.reduce((a, b) => (b.wallMs > a.wallMs ? b : a));
  goals.push(
    {
      measure: 'bundles: KB a cold start loads',
      figure: `${rows.length - overSize.length} of ${rows.length} within; largest ${Math.max(...rows.map((r) => r.initKb)).toFixed(0)} KB`,
      ratio: '',
      goal: '≤ 300 KB (messages, email inbound ≤ 400)',
      met: overSize.length === 0,
    },
    {
      measure: 'init, fresh Node 24 process',
      figure: `${rows.filter((r) => r.wallMs <= 60).length} of ${rows.length} within; slowest ${slowest.wallMs.toFixed(0)} ms (${slowest.name})`,
      ratio: '',
      goal: '≤ 60 ms',
      met: rows.every((r) => r.wallMs <= 60),
    },
    ...coldStartGoals(bench),
  );
}

await stack.stop();
process.exit(0);
