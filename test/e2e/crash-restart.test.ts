import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, type ExpectStatic, it } from 'vitest';
import { useReceiver } from '../fixtures/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { freePort, signalGroup, startCommand } from '../support/processes.ts';

/**
 * The local stack loses no write and no event across a crash or a Ctrl-C
 * (issue 17, part 5; issue 33, part 3), tried from outside as a user would:
 * `scripts/start.ts` in its own process group on a data directory, a webhook
 * on every event, a burst of ticket creates, the whole group killed in the
 * middle of it, a restart on the same data directory, and a count of the
 * tickets answered 201 that the store no longer has, of those whose
 * `ticket.created` never arrived, and of those delivered twice. Only HTTP,
 * files and processes: nothing here knows how the stack runs its handlers.
 */
const root = resolve(import.meta.dirname, '../..');
const ALL_EVENTS = ['ticket.created', 'ticket.updated', 'ticket.deleted', 'ticket.assignment.changed', 'ticket.resolved'];
const TICKETS = 150;
/** The group is killed once this many creates have answered 201 (so about half the burst is sent). */
const KILL_AFTER = 60;
const CONCURRENCY = 8;

const receiver = useReceiver();
const groups: number[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A user's shell: this worker's own stack settings (test/support/setup-env.ts) are left out, so the stack configures itself. */
function shellEnv(): NodeJS.ProcessEnv {
  const own =
    /^(TABLE_NAME|DYNAMODB_ENDPOINT|SESSION_SECRET|EVENT_BUS_NAME|SQS_.*|WEBHOOK_.*|CONSUMER_.*|AWS_ENDPOINT_URL.*|EMAIL_.*|ENRICHMENT_.*|.*_QUEUE_URL|.*_DLQ_URL|DATA_DIR|PORT|DYNAMODB_PORT)$/;
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !own.test(k)));
}

async function startStack(env: NodeJS.ProcessEnv) {
  const started = await startCommand(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { env, cwd: root, group: true }, 'Press Ctrl-C', 120_000);
  groups.push(started.child.pid!);
  return started;
}

async function call(base: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, { method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
}

/**
 * Burst of creates at CONCURRENCY; once KILL_AFTER have answered 201, `kill`
 * runs and no new request is sent. Returns the ids of every create that
 * answered 201, those in flight at the kill included.
 */
async function burstAndKill(base: string, key: string, kill: () => void): Promise<Set<string>> {
  const answered = new Set<string>();
  let sent = 0;
  let killed = false;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (!killed && sent < TICKETS) {
        const n = sent++;
        try {
          const res = await call(base, key, 'POST', '/helpdesk/api/v1/tickets', { ticket: { subject: `Crash test ${n}`, requesterEmail: 'ann@customer.example' } });
          if (res.status === 201) answered.add(res.body.ticket.id);
        } catch {
          // The stack went away under this request: not committed as far as the caller knows.
        }
        if (!killed && answered.size >= KILL_AFTER) {
          killed = true;
          kill();
        }
      }
    }),
  );
  return answered;
}

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * Kill the running stack mid-burst with `signal`, start it again on the same data directory, and count the committed
 * tickets whose `ticket.created` never arrived. Returns the restarted stack, still running.
 */
async function crashAndRestart(signal: 'SIGKILL' | 'SIGTERM', first: Stack, env: NodeJS.ProcessEnv, expect: ExpectStatic): Promise<Stack> {
  const base = `http://localhost:${env.PORT}`;
  const began = Date.now();
  const seconds: Record<string, number> = {};
  const phase = (name: string) => {
    seconds[name] = Math.round((Date.now() - began) / 100) / 10;
    console.log(`${signal}: ${name} after ${seconds[name]} s`);
  };

  // Arrange: the demo account's key (kept in the data directory) and a webhook on every event, this scenario's own.
  const { apiKey } = JSON.parse(readFileSync(join(env.DATA_DIR!, 'demo-account.json'), 'utf8'));
  const path = `/crash-${signal}`;
  const created = await call(base, apiKey, 'POST', '/helpdesk/api/v1/webhooks', { webhook: { name: path, targetUrl: receiver().url(path), events: ALL_EVENTS } });
  expect(created.status).toBe(201);
  const endpoint = receiver().endpoint(path, created.body.webhook.signingSecret);
  const createdDeliveries = () => endpoint.received.map((r) => JSON.parse(r.body)).flatMap((p) => (p.event === 'ticket.created' ? [p.data.ticket.id as string] : []));
  const undelivered = (ids: Iterable<string>) => {
    const delivered = new Set(createdDeliveries());
    return [...ids].filter((id) => !delivered.has(id));
  };
  /** Tickets whose ticket.created arrived more than once (at least once allows it; a clean stop should not cause it). */
  const deliveredTwice = () => {
    const seen = new Map<string, number>();
    for (const id of createdDeliveries()) seen.set(id, (seen.get(id) ?? 0) + 1);
    return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
  };
  /** Of those, the ones whose copies carry different webhook-ids (a receiver deduplicating by webhook-id would not see them as one). */
  const twiceUnderNewIds = (ids: readonly string[]) =>
    ids.filter((id) => new Set(endpoint.received.filter((r) => r.body.includes(`"id":"${id}"`) && r.body.includes('"ticket.created"')).map((r) => r.id)).size > 1);

  // Act: the burst, the signal to the whole group mid-burst, and a restart on the same data directory.
  let stopped: ReturnType<typeof signalGroup> | undefined;
  const answered = await burstAndKill(base, apiKey, () => (stopped = signalGroup(first.child, signal)));
  phase('killed');
  const exit = await stopped!;
  phase('exited');
  const undeliveredAtRestart = undelivered(answered).length;
  const second = await startStack(env);
  phase('restarted');
  // A ticket the store no longer has after the restart: a write DynamoDB Local acknowledged and then lost. Its JVM
  // runs under a watchdog in its own process group (local/dynamodb-local.ts), so a kill of the stack's group lets
  // it stop cleanly, finishing what it acknowledged: none may vanish, whatever the signal.
  const gone = await Promise.all(undelivered(answered).map(async (id) => ((await call(base, apiKey, 'GET', `/helpdesk/api/v1/tickets/${id}`)).status === 404 ? [id] : [])));
  const vanished = gone.flat();
  await eventually(() => undelivered(answered).length === 0, 45_000, 'every committed ticket delivered').catch(() => undefined);
  const lost = undelivered(answered);
  // A second copy would come from a message the first run held, visible again at the restart: allow it a moment.
  await new Promise((r) => setTimeout(r, 3_000));
  phase('delivered');
  // The scenario's webhook goes, so a later scenario's burst is delivered to its own receiver only.
  expect((await call(base, apiKey, 'DELETE', `/helpdesk/api/v1/webhooks/${created.body.webhook.id}`)).status).toBe(204);
  const twice = deliveredTwice();
  const summary = {
    signal,
    answered201: answered.size,
    undeliveredAtRestart,
    vanishedFromStore: vanished.length,
    lost: lost.length,
    deliveredTwice: twice.length,
    twiceUnderNewWebhookIds: twiceUnderNewIds(twice).length,
    seconds,
  };
  console.log(JSON.stringify(summary));

  // Assert
  expect(answered.size).toBeGreaterThanOrEqual(KILL_AFTER);
  // The signal came in the middle of the burst: requests were still to be sent. (After a SIGTERM the stack may well
  // have delivered everything before it exited; after a SIGKILL events were still on their way.)
  expect(answered.size).toBeLessThan(TICKETS);
  if (signal === 'SIGKILL') expect(undeliveredAtRestart, 'events were still on their way at the kill').toBeGreaterThan(0);
  expect(vanished, 'tickets answered 201 and gone from the store after the restart').toEqual([]);
  expect(lost, `${lost.length} of ${answered.size} committed tickets never delivered after ${signal} and a restart`).toEqual([]);
  if (signal === 'SIGTERM') {
    // A clean stop finished its deliveries, or left them queued unsent: nothing is delivered twice.
    expect(twice, 'tickets whose ticket.created was delivered twice after a SIGTERM').toEqual([]);
    // It finished or handed over its work and exited cleanly.
    expect(exit).toEqual({ code: 0, signal: null });
  }
  return second;
}

// One scenario after the other, on one data directory, as a user's laptop lives it: a crash, a restart, and later a
// Ctrl-C of the restarted stack and another start. The SIGKILL's restart is the stack the SIGTERM stops, so the file
// starts the stack three times, not four. Side by side, two stacks (each a JVM and a burst) on a 2-core runner beside
// the other test worker took longer than in sequence, and timed out. The bound is generous (a scenario takes about
// 45 s on CI, 90 s on a loaded machine); the phases are logged as they pass, so a timeout says where it stood.
describe('the local stack across a crash or a Ctrl-C', () => {
  it('SIGKILL of the whole stack mid-burst, then a restart on the same DATA_DIR: no committed ticket lost, every ticket.created delivered; then SIGTERM to the restarted stack mid-burst and a restart: every ticket.created delivered once', async ({
    expect,
  }) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sd-crash-'));
    dirs.push(dataDir);
    const env = { ...shellEnv(), PORT: String(await freePort()), DYNAMODB_PORT: String(await freePort()), SMTP_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    const first = await startStack(env);
    const afterKill = await crashAndRestart('SIGKILL', first, env, expect);
    const afterTerm = await crashAndRestart('SIGTERM', afterKill, env, expect);
    expect(await afterTerm.stop()).toBe(0);
  }, 600_000);
});
