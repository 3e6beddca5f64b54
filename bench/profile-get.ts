/**
 * CPU profile of the request path: GET ticket through the local gateway in a
 * loop (each call followed by its bare GetItem), on a warm DynamoDB Local.
 * Writes a .cpuprofile (open it in Chrome DevTools or VS Code) and prints both
 * p50s. `CACHE=1` turns the authorizer cache on; `N` sets the calls (1500).
 *
 * What it covers: this process's main thread, which runs the gateway, the
 * DynamoDB proxy the functions reach the store through, the bench's HTTP
 * client and its bare calls. The authorizer and the tickets function run in
 * their own worker threads (local/lambda/, as `npm start` runs them), which
 * node:inspector's session on the main thread does not sample; to profile a
 * function, import its bundle in a process of its own with --cpu-prof.
 *
 *   node --import tsx bench/profile-get.ts [out.cpuprofile]
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { gatewayCaller } from './http.ts';
import { startBenchStack } from './stack.ts';

const out = process.argv[2] ?? 'get.cpuprofile';
const N = Number(process.env.N ?? 1500);
const stack = await startBenchStack();
const accounts = await import('#shared/accounts/service.ts');
const { ddb, tableName } = await import('#shared/db/client.ts');
const { keys } = await import('#shared/db/keys.ts');
const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
const gw = await stack.gateway(process.env.CACHE === '1' ? { authorizerCacheTtlSeconds: 300 } : undefined);
const acct = await accounts.createAccount({ name: 'Profile', plan: 'enterprise', ownerEmail: 'owner@profile.example' });
const send = gatewayCaller(gw.url);
const call = (method: string, path: string, body?: unknown) => send(acct.apiKey, method, path, body);
const ids: string[] = [];
for (let i = 0; i < 30; i++) ids.push((await call('POST', '/helpdesk/api/v1/tickets', { ticket: { subject: `Profile ${i}` } })).ticket.id);
const get = (i: number) => call('GET', `/helpdesk/api/v1/tickets/${ids[i % ids.length]}`);
const bare = (i: number) => ddb.send(new GetCommand({ TableName: tableName(), Key: keys.ticket(acct.accountId, ids[i % ids.length]) }));

// Warm the JVM and the code paths, then profile the same loop.
for (let i = 0; i < N; i++) await Promise.all([get(i), bare(i)]);
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 200 });
await session.post('Profiler.start');
const api: number[] = [];
const direct: number[] = [];
for (let i = 0; i < N; i++) {
  let t = performance.now();
  await get(i);
  api.push(performance.now() - t);
  t = performance.now();
  await bare(i);
  direct.push(performance.now() - t);
}
const { profile } = await session.post('Profiler.stop');
writeFileSync(out, JSON.stringify(profile));
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`GET /v1/tickets/{id} p50 ${p50(api).toFixed(2)} ms, bare GetItem p50 ${p50(direct).toFixed(2)} ms, ratio ${(p50(api) / p50(direct)).toFixed(2)}; profile in ${out}`);
await stack.stop();
process.exit(0);
