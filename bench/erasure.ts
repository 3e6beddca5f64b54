/**
 * Issue 40's figure for erasure (decisions §23): the wall time of erasing a
 * contact who requested 2,000 tickets (one message of theirs on each), from
 * the POST to the job completed, with the stack `npm start` runs (the jobs
 * API function and the bulk-jobs consumer from their bundles, fed by the
 * local queue poller: a step of 25 tickets per message, each step queueing
 * the next). The tickets, their words and messages are seeded through the
 * store (the API is not what is measured); the job is polled in this
 * process, straight from the table. `BENCH_ONLY=erasure npm run bench`.
 */
import type { DynamoDbProxy } from '../local/dynamodb-proxy.ts';
import type { LocalLambda } from '../local/lambda/index.ts';

/** bench/http.ts's caller: the answer's JSON body; an error answer throws. */
type Call = (method: string, path: string, body?: unknown, token?: string) => Promise<any>;

const TICKETS = 2_000;
const fmt = (n: number, d = 1) => n.toFixed(d);

export async function runErasureBench(opts: {
  call: Call;
  store: DynamoDbProxy;
  lambda: LocalLambda;
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  tableName: string;
  createAccount: () => Promise<{ accountId: string; apiKey: string }>;
}) {
  const { startPipeline } = await import('../local/pipeline.ts');
  const jobs = await import('#shared/jobs/service.ts');
  const { newId } = await import('#shared/ids.ts');
  const { replaceTicketWrite, ticketWordWrites } = await import('#shared/tickets/repository.ts');
  const { messageItemWrites } = await import('#shared/messages/repository.ts');
  const { requesterCountWrite } = await import('#shared/contacts/repository.ts');
  const { batchPut } = await import('#shared/db/query.ts');
  const { writeNow } = await import('#shared/db/transact.ts');
  const { ERASURE_TICKETS_PER_STEP } = await import('#shared/privacy/erasure.ts');

  const acct = await opts.createAccount();
  const call: Call = (method, path, body) => opts.call(method, path, body, acct.apiKey);
  const email = 'erin.bench@customer.example';
  const name = 'Erin Bench';
  const contact = (await call('POST', '/helpdesk/api/contacts', { name, email })).data;

  // Seed: 2,000 tickets requested by the contact, with their words, and one message of theirs on each.
  const t0 = Date.now() - TICKETS * 1000;
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < TICKETS; i++) {
    const at = new Date(t0 + i * 1000).toISOString();
    const ticket = {
      id: newId('tkt', t0 + i * 1000),
      accountId: acct.accountId,
      subject: `Order ${i} is late`,
      status: 'open' as const,
      priority: 'normal' as const,
      type: 'question' as const,
      assigneeId: null,
      requesterEmail: email,
      requesterName: name,
      groupId: null,
      tags: [],
      customFields: [],
      mergedInto: null,
      satisfactionRating: null,
      createdAt: at,
      updatedAt: at,
      version: 1,
    };
    const message = {
      id: newId('msg', t0 + i * 1000),
      accountId: acct.accountId,
      ticketId: ticket.id,
      type: 'request' as const,
      content: `<p>My address is 1 Bench Street. ${name}</p>`,
      textContent: `My address is 1 Bench Street. ${name}`,
      authorId: contact.id,
      attachments: [],
      ccs: [],
      recipients: [],
      isForward: false,
      channel: 'email' as const,
      emailDelivery: null,
      sendEmail: false,
      createdAt: at,
      updatedAt: at,
    };
    for (const w of [replaceTicketWrite(ticket, 0), ...ticketWordWrites(null, ticket), ...messageItemWrites(message).slice(0, 2)]) items.push(w.item.Put!.Item!);
  }
  await batchPut(items, { concurrency: 8 });
  await writeNow(requesterCountWrite(acct.accountId, email, TICKETS));

  const pipeline = await startPipeline({
    lambda: opts.lambda,
    dynamodbEndpoint: opts.dynamodbEndpoint,
    sqsEndpoint: opts.sqsEndpoint,
    tableName: opts.tableName,
    queues: ['bulk-jobs'],
    pollIntervalMs: 50,
    sweepOnStart: false,
    schedules: false,
  });
  try {
    opts.store.reset();
    const started = performance.now();
    const { job } = await call('POST', `/helpdesk/api/v1/contacts/${contact.id}/erase`, {});
    for (;;) {
      const now = await jobs.getJob(acct, job.id);
      if (now.status === 'completed') {
        const ms = performance.now() - started;
        if (now.succeeded !== 1) throw new Error(`erasure bench: the job failed: ${JSON.stringify(now.results)}`);
        const store = opts.store.reset();
        const left = await call('GET', `/helpdesk/api/v1/tickets?search=${encodeURIComponent(email)}`);
        if (left.tickets.length) throw new Error(`erasure bench: ${left.tickets.length} tickets still name the contact`);
        console.log(
          `\nErasure of a contact with ${TICKETS} tickets, one message of theirs on each (POST /v1/contacts/{id}/erase -> job completed; ${Math.ceil(TICKETS / ERASURE_TICKETS_PER_STEP) + 1} steps of ${ERASURE_TICKETS_PER_STEP} tickets through the bulk-jobs queue):\n`,
        );
        console.log(`  wall time: ${fmt(ms / 1000, 1)} s, ${fmt(ms / TICKETS)} ms per ticket`);
        console.log(`  DynamoDB requests per ticket (every function's): ${fmt(store.requests / TICKETS)}`);
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await pipeline.stop();
  }
}
