/**
 * Issue 38's figure for ticket merge (decisions §20): the wall time of a
 * merge of one source with 200 messages into a target, from the POST to the
 * job completed, with the stack `npm start` runs (the jobs API function and
 * the bulk-jobs consumer from their bundles, the consumer fed by the local
 * queue poller as its event-source mapping would feed it), and the DynamoDB
 * requests every function made meanwhile (the store proxy's count: the API,
 * the consumer's moves and close, the outbox publisher). The job is polled in
 * this process, straight from the table, so the polls cost the functions
 * nothing.
 */
import type { DynamoDbProxy } from '../local/dynamodb-proxy.ts';
import type { LocalLambda } from '../local/lambda/index.ts';
import type { QueueName } from '#app/topology.ts';

/** bench/http.ts's caller: the answer's JSON body; an error answer throws. */
type Call = (method: string, path: string, body?: unknown, token?: string) => Promise<any>;

const MESSAGES = 200;
const fmt = (n: number, d = 1) => n.toFixed(d);

export async function runMergeBench(opts: { call: Call; store: DynamoDbProxy; lambda: LocalLambda; dynamodbEndpoint: string; sqsEndpoint: string }) {
  const { startPipeline } = await import('../local/pipeline.ts');
  const { LOCAL_TABLE } = await import('../local/stack.ts');
  const jobs = await import('#shared/jobs/service.ts');
  const { MOVE_BATCH } = await import('#shared/merge/rules.ts');
  const accounts = await import('#shared/accounts/service.ts');
  const made = await accounts.createAccount({ name: 'Merge', plan: 'enterprise', ownerEmail: 'owner@merge.example' });
  // Messages take session tokens only.
  const acct = { accountId: made.accountId, apiKey: made.apiKey, session: (await accounts.issueSessionToken(made.accountId, made.owner.id)).token };
  const call: Call = (method, path, body) => opts.call(method, path, body, acct.apiKey);
  const ticket = async (subject: string, tags: string[]) => (await call('POST', '/helpdesk/api/v1/tickets', { ticket: { subject, tags, requesterEmail: 'dana@bench.example' } })).ticket.id as string;
  /** A source with `n` messages (notes and requests alternating, a few hundred characters each), added through the API. */
  const sourceWith = async (n: number) => {
    const id = await ticket(`Duplicate with ${n} messages`, ['dup']);
    for (let i = 0; i < n; i++) {
      const type = i % 2 ? 'note' : 'request';
      await opts.call('POST', '/helpdesk/api/messages', { ticket_id: id, type, content: `<p>Message ${i}: ${'the printer is on fire again '.repeat(10)}</p>` }, acct.session);
    }
    return id;
  };

  const queues: QueueName[] = ['bulk-jobs'];
  const pipeline = await startPipeline({
    lambda: opts.lambda,
    dynamodbEndpoint: opts.dynamodbEndpoint,
    sqsEndpoint: opts.sqsEndpoint,
    tableName: LOCAL_TABLE,
    queues,
    pollIntervalMs: 50,
    sweepOnStart: false,
    schedules: false,
  });
  /** POST, then the job read every 10 ms until completed: wall ms, and what the functions asked of the store meanwhile. */
  const merge = async (target: string, source: string) => {
    opts.store.reset();
    const t0 = performance.now();
    const { job } = await call('POST', `/helpdesk/api/v1/tickets/${target}/merge`, { ids: [source] });
    for (;;) {
      const now = await jobs.getJob(acct, job.id);
      if (now.status === 'completed') {
        const ms = performance.now() - t0;
        if (now.succeeded !== 1) throw new Error(`merge bench: the merge failed: ${JSON.stringify(now.results)}`);
        return { ms, store: opts.store.reset() };
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  try {
    const target = await ticket('Merge target', ['billing']);
    // Warm: the jobs function, the consumer and the store's paths (cold starts are the bundles table's business).
    await merge(target, await sourceWith(3));
    const source = await sourceWith(MESSAGES);
    // The outbox publisher done with the seeding's events first, so the count is the merge's alone.
    const { ddb, tableName } = await import('#shared/db/client.ts');
    const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
    const pending = async () =>
      (
        await ddb.send(
          new QueryCommand({
            TableName: tableName(),
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
            ExpressionAttributeValues: { ':pk': `A#${acct.accountId}`, ':p': 'OUTBOX#' },
            Select: 'COUNT',
          }),
        )
      ).Count;
    while (await pending()) await new Promise((r) => setTimeout(r, 50));
    const run = await merge(target, source);
    const byCommand = Object.entries(run.store.byCommand)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}×${v}`)
      .join(' ');
    console.log(
      `\nMerge of a source with ${MESSAGES} messages into a target (POST /v1/tickets/{id}/merge -> job completed; moves of up to ${MOVE_BATCH} messages a transaction, then the close, in one step of the bulk-jobs queue, warm):\n`,
    );
    console.log(`  wall time: ${fmt(run.ms, 0)} ms, ${fmt(run.ms / MESSAGES, 2)} ms per message`);
    console.log(`  DynamoDB requests (every function's: API, consumer, outbox publisher): ${run.store.requests}, ${fmt(run.store.requests / MESSAGES, 2)} per message (${byCommand})`);
  } finally {
    await pipeline.stop();
  }
}
