import { describe, expect, it } from 'vitest';
import { localCounterTableName } from '#shared/db/table-definition.ts';
import { LOCAL_TABLE } from '../../local/stack.ts';
import { createTestAccount, useGateway } from '../support/api.ts';
import { must, TICKETS } from '../support/helpdesk.ts';
import { useStoreProxy } from '../support/store-proxy.ts';

// What views cost on the wire (decisions §21): a count read is one store call besides the rate-limit count (a
// TransactGetItems: the counts and the change tally as they stood at one instant, never fresh one change early), and a
// ticket create still makes one transaction, the change tally's item inside it (no request added for freshness).
const store = useStoreProxy();
const { client } = useGateway({ authorizerCacheTtlSeconds: 300 });
const COUNTERS = localCounterTableName(LOCAL_TABLE);
const VIEWS = '/helpdesk/api/v1/views';

async function calls(run: () => Promise<unknown>) {
  const seen: { operation: string; table: string; request: Record<string, any> }[] = [];
  store.inject((operation, request) => {
    const tables = request.TransactItems
      ? [...new Set(request.TransactItems.map((i: Record<string, { TableName: string }>) => Object.values(i)[0].TableName))]
      : Object.keys(request.RequestItems ?? {});
    seen.push({ operation, table: String(request.TableName ?? tables.join(',')), request });
    return undefined;
  });
  await run();
  store.inject(undefined);
  return seen;
}

describe('views on the wire', () => {
  it('a count read is one TransactGetItems; a ticket create one transaction that carries the change tally', async () => {
    // Arrange
    const acct = await createTestAccount();
    const token = acct.ownerKey;
    const view = must(await client.request('POST', VIEWS, { token, body: { view: { title: 'Open', conditions: { all: [{ field: 'status', operator: 'is', value: 'open' }] } } } }), 201, 'view').view;
    must(await client.request('GET', `${VIEWS}/${view.id}/count`, { token }), 200, 'warm');
    // Act
    const count = await calls(() => client.request('GET', `${VIEWS}/${view.id}/count`, { token }));
    const several = await calls(() => client.request('GET', `${VIEWS}/count?ids=${view.id},${view.id}`, { token }));
    const create = await calls(async () => must(await client.request('POST', TICKETS, { token, body: { ticket: { subject: 'Cost' } } }), 201, 'create'));
    console.log('views store calls', JSON.stringify({ count: count.map((c) => c.operation), create: create.map((c) => `${c.operation} ${c.table === COUNTERS ? 'counters' : 'table'}`) }));
    // Assert
    for (const read of [count, several]) expect(read.filter((c) => c.table !== COUNTERS).map((c) => c.operation)).toEqual(['TransactGetItems']);
    const writes = create.filter((c) => c.table !== COUNTERS && /Write|Put|Update|Delete/.test(c.operation));
    expect(writes.map((c) => c.operation)).toEqual(['TransactWriteItems']);
    // The proxy sees the wire format: the tally's update names its key as {S: "TCHG#<shard>"}.
    expect(writes[0].request.TransactItems.some((i: Record<string, any>) => String(i.Update?.Key?.sk?.S ?? '').startsWith('TCHG#'))).toBe(true);
  });
});
