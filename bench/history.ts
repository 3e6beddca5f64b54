/**
 * Issue 27's figures for history (decisions §15):
 *
 *   - the write cost of a ticket change's audit: PUT /v1/tickets/{id} of one
 *     field, its DynamoDB requests counted by the store proxy, and the write
 *     units of its one TransactWriteItems, item by item, table and index
 *     copies apart;
 *   - the incremental export at 200 and at 6,000 tickets and contacts (two
 *     accounts, seeded a day back so every record is settled): a full walk
 *     from start_time through every cursor, items per second and, per page,
 *     the requests and the items the store read.
 *
 * Write units: DynamoDB Local's own ConsumedCapacity of a TransactWriteItems
 * does not follow DynamoDB's rules (three 1-unit puts in one transaction come
 * back as 2 units), while a lone PutItem's does (1 KB units per item, each
 * index copy counted, a moved index entry a delete plus a put, an unchanged
 * keys-only entry nothing). So each Put of the transaction, caught at the
 * proxy, is replayed alone on a scratch table of the same definition with
 * ReturnConsumedCapacity INDEXES (a replaced item over its previous version),
 * and the transaction's rate doubles it, as DynamoDB Local does for table and
 * index copies alike.
 */
import { DeleteTableCommand, GetItemCommand, PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDbProxy } from '../local/dynamodb-proxy.ts';
import { ensureTable, localClient } from '../local/dynamodb-local.ts';
import { localCounterTableName } from '#shared/db/table-definition.ts';
import { recordSeeder } from './growth.ts';

/** bench/http.ts's caller: the answer's JSON body; an error answer throws. */
type Call = (method: string, path: string, body?: unknown, token?: string) => Promise<any>;
type Item = Record<string, AttributeValue>;

const PUTS = 20;
const WALKS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n: number, d = 1) => n.toFixed(d);
const thousands = (n: number) => n.toLocaleString('en-US');

function printTable(rows: string[][]) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
}

/** An attribute value's size by DynamoDB's rules (names and values in UTF-8 bytes, numbers about a byte per two digits, 3 bytes per list or map plus 1 per element). */
function valueBytes(value: AttributeValue): number {
  // On the wire (as the proxy sees it) binary values are base64 strings.
  const v = value as { S?: string; N?: string; B?: string | Uint8Array; BOOL?: boolean; NULL?: boolean; SS?: string[]; NS?: string[]; L?: AttributeValue[]; M?: Record<string, AttributeValue> };
  const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');
  if (v.S !== undefined) return utf8(v.S);
  if (v.N !== undefined) return Math.ceil(v.N.replace(/^-|\.|^0+|e.*$/gi, '').length / 2) + 1;
  if (v.B !== undefined) return typeof v.B === 'string' ? Buffer.from(v.B, 'base64').length : v.B.length;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.SS) return v.SS.reduce((n, s) => n + utf8(s), 0);
  if (v.NS) return v.NS.reduce((n, s) => n + valueBytes({ N: s }), 0);
  if (v.L) return 3 + v.L.reduce((n, x) => n + 1 + valueBytes(x), 0);
  if (v.M) return 3 + Object.entries(v.M).reduce((n, [k, x]) => n + 1 + utf8(k) + valueBytes(x), 0);
  return 0;
}
const itemBytes = (item: Item) => Object.entries(item).reduce((n, [k, v]) => n + Buffer.byteLength(k, 'utf8') + valueBytes(v), 0);

interface ItemCost {
  bytes: number;
  table: number;
  indexes: Record<string, number>;
}

/** What a PUT's transaction writes, by item kind (the item's `type`), summed over the PUTs measured. */
interface KindCost {
  count: number;
  bytes: number;
  table: number;
  indexes: Record<string, number>;
}

/** Requests and write units of PUT /v1/tickets/{id} (one field), the audit's share apart. */
async function benchAuditCost(opts: { call: Call; store: DynamoDbProxy; dynamodbEndpoint: string; tableName: string; accountId: string; tickets: string[] }) {
  const { keys } = await import('#shared/db/keys.ts');
  const client = localClient(opts.dynamodbEndpoint);
  const scratch = `${opts.tableName}-wcu`;
  await ensureTable(opts.dynamodbEndpoint, scratch);
  const caught: Item[][] = [];
  const others: string[] = [];
  opts.store.inject((operation, request) => {
    if (operation === 'TransactWriteItems') {
      const items = (request.TransactItems ?? []) as Record<string, any>[];
      caught.push(items.filter((t) => t.Put).map((t) => structuredClone(t.Put.Item as Item)));
      for (const t of items) if (!t.Put) others.push(Object.keys(t)[0]);
    }
    return undefined;
  });
  const perPut: { requests: number; byCommand: Record<string, number> }[] = [];
  const byKind = new Map<string, KindCost>();
  const replay = async (item: Item, previous: Item | undefined): Promise<ItemCost> => {
    if (previous) await client.send(new PutItemCommand({ TableName: scratch, Item: previous }));
    const out = await client.send(new PutItemCommand({ TableName: scratch, Item: item, ReturnConsumedCapacity: 'INDEXES' }));
    const indexes = Object.fromEntries(Object.entries(out.ConsumedCapacity?.GlobalSecondaryIndexes ?? {}).map(([k, c]) => [k, c.CapacityUnits ?? 0]));
    return { bytes: itemBytes(item), table: out.ConsumedCapacity?.Table?.CapacityUnits ?? 0, indexes };
  };
  try {
    // One warm-up call, not counted (a cold worker's first call).
    await opts.call('PUT', `/helpdesk/api/v1/tickets/${opts.tickets[0]}`, { ticket: { subject: 'Audited' } });
    caught.length = 0;
    for (let i = 0; i < PUTS; i++) {
      const id = opts.tickets[i % opts.tickets.length];
      const key = keys.ticket(opts.accountId, id);
      const before = (await client.send(new GetItemCommand({ TableName: opts.tableName, Key: { pk: { S: key.pk }, sk: { S: key.sk } } }))).Item!;
      opts.store.reset();
      await opts.call('PUT', `/helpdesk/api/v1/tickets/${id}`, { ticket: { priority: before.priority?.S === 'high' ? 'low' : 'high' } });
      perPut.push(opts.store.reset());
      const tx = caught[caught.length - 1];
      for (const item of caught.length === i + 1 ? tx : []) {
        const previous = item.pk.S === key.pk && item.sk.S === key.sk ? before : undefined;
        const cost = await replay(item, previous);
        const kind = `${item.type?.S ?? '?'}${previous ? ' (replaced)' : ''}`;
        const k = byKind.get(kind) ?? { count: 0, bytes: 0, table: 0, indexes: {} };
        k.count += 1;
        k.bytes += cost.bytes;
        k.table += cost.table;
        for (const [name, u] of Object.entries(cost.indexes)) k.indexes[name] = (k.indexes[name] ?? 0) + u;
        byKind.set(kind, k);
      }
    }
  } finally {
    opts.store.inject(undefined);
    await client.send(new DeleteTableCommand({ TableName: scratch })).catch(() => undefined);
    await client.send(new DeleteTableCommand({ TableName: localCounterTableName(scratch) })).catch(() => undefined);
    client.destroy();
  }

  const requests = perPut.reduce((n, s) => n + s.requests, 0) / PUTS;
  const commands: Record<string, number> = {};
  for (const s of perPut) for (const [k, v] of Object.entries(s.byCommand)) commands[k] = (commands[k] ?? 0) + v;
  const txCalls = (commands.TransactWriteItems ?? 0) / PUTS;
  const txItems = caught.reduce((n, t) => n + t.length, 0) / caught.length + others.length / caught.length;
  console.log(`\nAudit write cost (issue 27): PUT /v1/tickets/{id} {ticket: {priority}} through the gateway, ${PUTS} calls (the priority flips each time)\n`);
  console.log(
    `DynamoDB requests per PUT: ${fmt(requests)} (${Object.entries(commands)
      .map(([k, v]) => `${k}×${fmt(v / PUTS)}`)
      .join(
        ' ',
      )}); TransactWriteItems calls per PUT: ${fmt(txCalls)}, of ${fmt(txItems)} items, the audit one of them${others.length ? ` (not Puts, not costed: ${[...new Set(others)].join(', ')})` : ''}\n`,
  );
  const units = (k: KindCost) => (k.table + Object.values(k.indexes).reduce((a, b) => a + b, 0)) / PUTS;
  const rows = [['item of the transaction', 'per PUT', 'bytes', 'table WCU', 'index WCU (by index)', 'WCU alone', 'in the transaction (x2)']];
  let total = 0;
  let audit = 0;
  for (const [kind, k] of [...byKind].sort(([a], [b]) => (a === 'audit' ? 1 : b === 'audit' ? -1 : a.localeCompare(b)))) {
    const u = units(k);
    total += u;
    if (kind === 'audit') audit += u;
    const idx = Object.entries(k.indexes).sort(([a], [b]) => a.localeCompare(b));
    rows.push([kind, fmt(k.count / PUTS), fmt(k.bytes / k.count, 0), fmt(k.table / PUTS), idx.length ? idx.map(([name, v]) => `${name} ${fmt(v / PUTS)}`).join(', ') : '-', fmt(u), fmt(2 * u)]);
  }
  rows.push(['total per PUT', '', '', '', '', fmt(total), fmt(2 * total)]);
  rows.push(['without the audit item', '', '', '', '', fmt(total - audit), fmt(2 * (total - audit))]);
  printTable(rows);
  console.log(
    `(the audit adds ${fmt(2 * audit)} of ${fmt(2 * total)} write units per PUT (${fmt((audit / total) * 100, 0)}%), its table item and its index copies, and no request: it is an item of the one TransactWriteItems the PUT makes anyway)`,
  );
  console.log("(write units: each Put replayed alone on a scratch table with ReturnConsumedCapacity INDEXES, DynamoDB Local's per-item accounting; x2 for the transaction)");
}

interface Walk {
  items: number;
  pages: number;
  ms: number;
  requests: number;
  itemsRead: number;
  maxRead: number;
}

/** A full export walk: start_time, then every cursor until endOfStream; the work of each page counted at the proxy. */
async function walk(call: Call, store: DynamoDbProxy, resource: string, pageSize: number, start: string): Promise<Walk> {
  const w: Walk = { items: 0, pages: 0, ms: 0, requests: 0, itemsRead: 0, maxRead: 0 };
  let query = `start_time=${encodeURIComponent(start)}`;
  for (;;) {
    store.reset();
    const t = performance.now();
    const page = await call('GET', `/helpdesk/api/v1/exports/${resource}?${query}&page_size=${pageSize}`);
    w.ms += performance.now() - t;
    const work = store.reset();
    w.pages += 1;
    w.items += page.items.length;
    w.requests += work.requests;
    w.itemsRead += work.itemsRead;
    w.maxRead = Math.max(w.maxRead, work.itemsRead);
    if (page.endOfStream) return w;
    query = `cursor=${encodeURIComponent(page.cursor)}`;
  }
}

const WALK_KINDS: [string, number][] = [
  ['tickets', 1000],
  ['tickets', 100],
  ['contacts', 1000],
];

/**
 * The export walks of two accounts, one of 200 tickets and contacts and one of
 * 6,000, in turns (a load elsewhere on this shared machine falls on both).
 */
async function benchExport(opts: { call: Call; store: DynamoDbProxy; createAccount: () => Promise<{ accountId: string; apiKey: string }> }) {
  const account = async (records: number) => {
    const acct = await opts.createAccount();
    const seed = await recordSeeder(acct.accountId);
    await seed.add(records, records);
    const call: Call = (m, p, b) => opts.call(m, p, b, acct.apiKey);
    return { call, start: new Date(seed.start.getTime() - 1000).toISOString() };
  };
  const sizes = [await account(200), await account(6_000)];
  // A cold worker's first call, not counted.
  await sizes[0].call('GET', `/helpdesk/api/v1/exports/tickets?start_time=${encodeURIComponent(sizes[0].start)}&page_size=1`);
  const [small, large] = [new Map<string, Walk>(), new Map<string, Walk>()];
  for (const [resource, size] of WALK_KINDS) {
    const walks: Walk[][] = [[], []];
    for (let r = 0; r < WALKS; r++) for (const [i, a] of sizes.entries()) walks[i].push(await walk(a.call, opts.store, resource, size, a.start));
    for (const [i, out] of [small, large].entries()) out.set(`${resource}@${size}`, { ...walks[i][0], ms: median(walks[i].map((x) => x.ms)) });
  }

  console.log(
    `\nIncremental export (issue 27): an account of 200 tickets and contacts beside one of 6,000 (updatedAt a day back: settled), a full walk from start_time through every cursor; time the median of ${WALKS} walks, in turns\n`,
  );
  const perPage = (w: Walk) => `${w.pages} / ${fmt(w.items / w.pages, 0)} / ${fmt(w.requests / w.pages)} / ${fmt(w.itemsRead / w.pages, 0)} (max ${thousands(w.maxRead)})`;
  const rate = (w: Walk) => w.items / (w.ms / 1000);
  const rows = [
    [
      'export walk',
      '200: items/s',
      '200: pages / per page items, requests, items read',
      '6,000: items/s',
      '6,000: pages / per page items, requests, items read',
      'items/s 6,000/200',
      'read per item 200 -> 6,000',
    ],
  ];
  for (const [resource, size] of WALK_KINDS) {
    const s = small.get(`${resource}@${size}`)!;
    const l = large.get(`${resource}@${size}`)!;
    rows.push([
      `${resource}, page_size ${size}`,
      thousands(Math.round(rate(s))),
      perPage(s),
      thousands(Math.round(rate(l))),
      perPage(l),
      `${(rate(l) / rate(s)).toFixed(2)}x`,
      `${fmt(s.itemsRead / s.items, 2)} -> ${fmt(l.itemsRead / l.items, 2)}`,
    ]);
  }
  printTable(rows);
  console.log("(per page: the mean over the walk's pages, the last one with endOfStream included; items read as the growth table counts them, the authorizer's included)");
}

export async function runHistoryBench(opts: {
  call: Call;
  store: DynamoDbProxy;
  dynamodbEndpoint: string;
  tableName: string;
  /** The bench account and some of its tickets, to update. */
  accountId: string;
  tickets: string[];
  createAccount: () => Promise<{ accountId: string; apiKey: string }>;
}) {
  const before = opts.store.consumedCapacity;
  opts.store.consumedCapacity = true;
  try {
    await benchAuditCost(opts);
    await benchExport(opts);
  } finally {
    opts.store.consumedCapacity = before;
  }
}
