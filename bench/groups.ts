/**
 * Distribution cost per ticket: a create into a distributing group beside a
 * create with no group, in the same run, interleaved so both see the same
 * machine load. Called by bench/run.ts (see benchGroupDistribution).
 */
import type { DdbCallStats } from '../local/dynamodb-proxy.ts';

export interface GroupBenchOptions {
  /** Authenticated JSON call through the local gateway as an admin (bench/run.ts `call`). */
  call: (method: string, path: string, body?: unknown) => Promise<any>;
  accountId: string;
  iterations: number;
  resetDdbStats: () => DdbCallStats;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

/**
 * Returns table rows (header first): DynamoDB requests per create (by
 * command), p50 and p99 latency, for POST /v1/tickets without a group, into a
 * manual group, and into leastBusy / roundRobin groups of 5 agents.
 */
export async function benchGroupDistribution({ call, accountId, iterations, resetDdbStats }: GroupBenchOptions): Promise<string[][]> {
  const accounts = await import('#shared/accounts/service.ts');
  const agents: string[] = [];
  for (let i = 0; i < 5; i++) {
    const u = await call('POST', '/playbook/api/v1/users', { email: `agent${i}.${Date.now()}@bench.example`, name: `Agent ${i}`, role: 'member', send_invitation: false });
    await accounts.issueSessionToken(accountId, u.id); // first login activates the agent
    agents.push(u.id);
  }
  const group = async (distributionMode: string) => {
    const g = (await call('POST', '/helpdesk/api/groups', { name: `Bench ${distributionMode}`, distributionMode })).data;
    await call('POST', `/helpdesk/api/groups/${g.id}/members/bulk`, { userIds: agents });
    return g.id as string;
  };
  const scenarios: Array<{ name: string; groupId: string | null }> = [
    { name: 'POST /v1/tickets (no group)', groupId: null },
    { name: 'POST /v1/tickets (manual group)', groupId: await group('manual') },
    { name: 'POST /v1/tickets (leastBusy, 5 agents)', groupId: await group('leastBusy') },
    { name: 'POST /v1/tickets (roundRobin, 5 agents)', groupId: await group('roundRobin') },
  ];
  const create = (groupId: string | null) => call('POST', '/helpdesk/api/v1/tickets', { ticket: { subject: 'Bench', ...(groupId ? { groupId } : {}) } });
  for (const s of scenarios) for (let i = 0; i < 10; i++) await create(s.groupId);

  const stats = scenarios.map(() => ({ lat: [] as number[], requests: 0, byCommand: {} as Record<string, number> }));
  for (let i = 0; i < iterations; i++) {
    for (const [k, s] of scenarios.entries()) {
      resetDdbStats();
      const started = performance.now();
      await create(s.groupId);
      stats[k].lat.push(performance.now() - started);
      const used = resetDdbStats();
      stats[k].requests += used.requests;
      for (const [c, n] of Object.entries(used.byCommand)) stats[k].byCommand[c] = (stats[k].byCommand[c] ?? 0) + n;
    }
  }
  const rows = [['create', 'DDB req/call', 'by command', 'p50 ms', 'p99 ms']];
  for (const [k, s] of scenarios.entries()) {
    const st = stats[k];
    const by = Object.entries(st.byCommand)
      .map(([c, n]) => `${c} ${(n / iterations).toFixed(1)}`)
      .join(', ');
    rows.push([s.name, (st.requests / iterations).toFixed(1), by, pct(st.lat, 50).toFixed(2), pct(st.lat, 99).toFixed(2)]);
  }
  return rows;
}
