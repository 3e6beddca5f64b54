import { describe, expect, it } from 'vitest';
import { localCounterTableName } from '#shared/db/table-definition.ts';
import { LOCAL_TABLE } from '../../local/stack.ts';
import { createTestAccount, useGateway } from '../support/api.ts';
import { must, TICKETS } from '../support/helpdesk.ts';
import { useStoreProxy } from '../support/store-proxy.ts';

// The functions' store calls on the wire (issue #21): what one GET of a ticket costs, with the authorizer cache off
// (every request authorized afresh, as before) and on (the stage default), and which table each write goes to.
const store = useStoreProxy();
const uncached = useGateway();
const cached = useGateway({ authorizerCacheTtlSeconds: 300 });
const COUNTERS = localCounterTableName(LOCAL_TABLE);

async function callsPerRequest(run: () => Promise<unknown>, n: number) {
  const calls: string[] = [];
  store.inject((operation, request) => {
    calls.push(`${operation} ${request.TableName ?? Object.keys(request.RequestItems ?? request.TransactItems ?? {}).join(',')}`);
    return undefined;
  });
  for (let i = 0; i < n; i++) await run();
  store.inject(undefined);
  const tally: Record<string, number> = {};
  for (const c of calls) tally[c] = (tally[c] ?? 0) + 1;
  for (const c of Object.keys(tally)) tally[c] /= n;
  return { total: calls.length / n, tally };
}

describe('store calls per request', () => {
  it('a cached GET ticket makes two calls, and none writes to the streamed table', async () => {
    // Arrange
    const acct = await createTestAccount();
    const created = must(await uncached.client.request('POST', TICKETS, { token: acct.ownerKey, body: { ticket: { subject: 'Cost' } } }), 201, 'create');
    const path = `${TICKETS}/${created.ticket?.id ?? created.data?.id ?? created.id}`;
    for (const gw of [uncached, cached]) must(await gw.client.request('GET', path, { token: acct.ownerKey }), 200, 'warm');
    // Act
    const off = await callsPerRequest(() => uncached.client.request('GET', path, { token: acct.ownerKey }), 10);
    const on = await callsPerRequest(() => cached.client.request('GET', path, { token: acct.ownerKey }), 10);
    console.log('GET ticket, store calls per request', JSON.stringify({ cacheOff: off, cacheOn: on }));
    // Assert
    expect(on.total).toBe(2);
    expect(on.tally[`UpdateItem ${COUNTERS}`]).toBe(1);
    expect(off.total).toBeGreaterThan(on.total);
    for (const m of [on, off]) for (const call of Object.keys(m.tally)) if (/^(UpdateItem|PutItem|DeleteItem|TransactWriteItems)/.test(call)) expect(call).toContain(COUNTERS);
  });
});
