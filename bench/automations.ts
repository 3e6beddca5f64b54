/**
 * Automations in `npm run bench`: DynamoDB requests per evaluated event (no
 * match, and match + apply), the pure engine's CPU time, and the hourly pass
 * per 1,000 open tickets. Calls the services in-process (no SQS): the queue
 * messages are counted, not sent.
 */
import type { Principal } from '#shared/auth/principal.ts';

type Call = (method: string, path: string, body?: unknown) => Promise<any>;

const fmt = (n: number, d = 1) => n.toFixed(d);

export async function benchAutomations(call: Call, principal: Principal): Promise<void> {
  const { resetDdbStats } = await import('#shared/db/stats.ts');
  const { onTicketEvent } = await import('#shared/automations/service.ts');
  const { explainRule, firstMatch } = await import('#shared/automations/engine.ts');
  const { accountsWithTimeRules } = await import('#shared/automations/repository.ts');
  const { evaluateBatch, TICKETS_PER_MESSAGE } = await import('#shared/automations/time-rules.ts');
  const tickets = await import('#shared/tickets/service.ts');
  const { newId } = await import('#shared/ids.ts');
  const accountId = principal.accountId;

  // 10 automations, each with 3 conditions; only the last matches tickets tagged `bench`.
  for (let i = 0; i < 9; i++) {
    await call('POST', '/helpdesk/api/automations', {
      name: `Never ${i}`,
      rule: {
        all: [
          { field: 'tags', op: 'containsoneormoreof', value: [`never${i}`] },
          { field: 'subject', op: 'contains', value: 'x' },
          { field: 'priority', op: 'notequal', value: 'low' },
        ],
        actions: [{ field: 'priority', value: 'low' }],
      },
    });
  }
  await call('POST', '/helpdesk/api/automations', {
    name: 'Escalate bench',
    rule: {
      all: [
        { field: 'tags', op: 'containsoneormoreof', value: ['bench'] },
        { field: 'status', op: 'notequal', value: 'pending' },
      ],
      actions: [
        { field: 'priority', value: 'urgent' },
        { field: 'addTags', value: ['escalated'] },
      ],
    },
  });

  const N = 100;
  const event = (ticketId: string) => ({
    eventId: newId('evt'),
    accountId,
    event: 'ticket.updated' as const,
    timestamp: new Date().toISOString(),
    data: { ticket: { id: ticketId, updatedFields: {} } },
  });
  const plain = await tickets.createTicket(principal, { subject: 'No match', status: 'new', priority: 'normal', type: 'question', tags: [] });
  const matching: { id: string; tags: string[] }[] = [];
  for (let i = 0; i < N; i++) matching.push(await tickets.createTicket(principal, { subject: 'Match', status: 'new', priority: 'normal', type: 'question', tags: ['bench'] }));

  const measure = async (name: string, run: (i: number) => Promise<unknown>) => {
    resetDdbStats();
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await run(i);
    const ms = (performance.now() - t0) / N;
    const st = resetDdbStats();
    const by = Object.entries(st.byCommand)
      .map(([k, v]) => `${k}×${fmt(v / N)}`)
      .join(' ');
    console.log(`  ${name.padEnd(42)} ${fmt(st.requests / N)} DDB req/event (${by}), ${fmt(ms, 2)} ms/event`);
  };
  console.log('\nAutomations (10 automations of 3 conditions; in-process, DynamoDB Local):\n');
  await measure('event, no automation matches', () => onTicketEvent(event(plain.id)));
  await measure('event, the 10th matches and applies', (i) => onTicketEvent(event(matching[i].id)));
  await measure('event again, actions change nothing', (i) => onTicketEvent(event(matching[i].id)));

  // The pure engine: 100 automations of 10 conditions against one ticket.
  const rules = Array.from({ length: 100 }, (_, i) => ({
    id: `a${i}`,
    isActive: true,
    rule: {
      all: Array.from({ length: 10 }, (_, j) => ({
        field: j % 2 ? 'subject' : 'tags',
        op: (j % 2 ? 'contains' : 'containsoneormoreof') as never,
        value: (j % 2 ? `word${j}` : [`tag${i}`, 'other']) as never,
      })),
      actions: [{ field: 'priority', value: 'low' }],
    },
  }));
  const t = { ...matching[0], tags: Array.from({ length: 20 }, (_, i) => `t${i}`) };
  const now = new Date();
  const R = 2000;
  let t0 = performance.now();
  for (let i = 0; i < R; i++) firstMatch(rules, t, now);
  const firstMatchUs = ((performance.now() - t0) / R) * 1000;
  t0 = performance.now();
  for (let i = 0; i < R / 10; i++) for (const r of rules) explainRule(r.rule, t, now);
  const explainUs = ((performance.now() - t0) / (R / 10)) * 1000;
  console.log(`  engine CPU, 100 automations x 10 conditions: first match ${fmt(firstMatchUs, 0)} µs/event, full dry-run explanation ${fmt(explainUs, 0)} µs`);

  // Hourly pass: 1,000 open tickets, one time rule that matches none of them (the common hour).
  const OPEN = 1000;
  const have = N + 1;
  for (let i = have; i < OPEN; i += 10) {
    await Promise.all(Array.from({ length: Math.min(10, OPEN - i) }, () => tickets.createTicket(principal, { subject: 'Open', status: 'open', priority: 'normal', type: 'question', tags: [] })));
  }
  await call('POST', '/helpdesk/api/automations', {
    name: 'Stale',
    rule: {
      all: [
        { field: 'hoursSinceUpdated', op: 'greaterthanorequalto', value: 72 },
        { field: 'status', op: 'equals', value: 'pending' },
      ],
      actions: [{ field: 'status', value: 'closed' }],
    },
  });
  resetDdbStats();
  let started = performance.now();
  const accounts = await accountsWithTimeRules();
  const ids: string[] = [];
  for (const a of accounts) {
    let key: Record<string, string> | undefined;
    do {
      const page = await tickets.openTicketIdsPage(a, 1000, key);
      ids.push(...page.ids);
      key = page.nextKey;
    } while (key);
  }
  const jobMs = performance.now() - started;
  const job = resetDdbStats();
  started = performance.now();
  for (let i = 0; i < ids.length; i += TICKETS_PER_MESSAGE) await evaluateBatch({ accountId, ticketIds: ids.slice(i, i + TICKETS_PER_MESSAGE), now: now.toISOString() });
  const consumerMs = performance.now() - started;
  const consumer = resetDdbStats();
  const per = 1000 / ids.length;
  const by = (s: typeof job) =>
    Object.entries(s.byCommand)
      .map(([k, v]) => `${k}×${fmt(v * per)}`)
      .join(' ');
  console.log(
    `  hourly pass, per 1,000 open tickets (${ids.length} listed): job ${fmt(job.requests * per)} DDB req (${by(job)}) + ${Math.ceil(1000 / TICKETS_PER_MESSAGE)} SQS messages, ${fmt(jobMs * per, 0)} ms;`,
  );
  console.log(`    consumer ${fmt(consumer.requests * per)} DDB req (${by(consumer)}), ${fmt(consumer.capacityUnits * per)} capacity units, ${fmt(consumerMs * per, 0)} ms`);
}
