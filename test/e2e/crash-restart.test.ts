import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useReceiver } from '../fixtures/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { freePort, signalGroup, startCommand } from '../support/processes.ts';

/**
 * The local stack loses no event across a crash or a Ctrl-C (issue 17, part 5),
 * tried from outside as a user would: `scripts/start.ts` in its own process
 * group on a data directory, a webhook on every event, a burst of ticket
 * creates, the whole group killed in the middle of it, a restart on the same
 * data directory, and a count of the tickets whose `ticket.created` never
 * arrived. Only HTTP, files and processes: nothing here knows how the stack
 * runs its handlers.
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
  const started = await startCommand(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { env, cwd: root, group: true }, 'Press Ctrl-C', 60_000);
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

/**
 * Kill the stack mid-burst with `signal`, start it again on the same data
 * directory, and count the committed tickets whose `ticket.created` never arrived.
 */
async function crashAndRestart(signal: 'SIGKILL' | 'SIGTERM') {
  const dataDir = mkdtempSync(join(tmpdir(), `sd-crash-${signal}-`));
  dirs.push(dataDir);
  const env = { ...shellEnv(), PORT: String(await freePort()), DYNAMODB_PORT: String(await freePort()), DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  const base = `http://localhost:${env.PORT}`;
  const began = Date.now();
  const seconds: Record<string, number> = {};
  const phase = (name: string) => (seconds[name] = Math.round((Date.now() - began) / 100) / 10);

  // Arrange: the stack, the demo account's key (kept in the data directory) and a webhook on every event.
  const first = await startStack(env);
  phase('started');
  const { apiKey } = JSON.parse(readFileSync(join(dataDir, 'demo-account.json'), 'utf8'));
  const path = `/crash-${signal}`;
  const created = await call(base, apiKey, 'POST', '/helpdesk/api/v1/webhooks', { webhook: { name: path, targetUrl: receiver().url(path), events: ALL_EVENTS } });
  expect(created.status).toBe(201);
  const endpoint = receiver().endpoint(path, created.body.webhook.signingSecret);
  const undelivered = (ids: Iterable<string>) => {
    const delivered = new Set(endpoint.received.map((r) => JSON.parse(r.body)).flatMap((p) => (p.event === 'ticket.created' ? [p.data.ticket.id as string] : [])));
    return [...ids].filter((id) => !delivered.has(id));
  };

  // Act: the burst, the signal to the whole group mid-burst, and a restart on the same data directory.
  let stopped: ReturnType<typeof signalGroup> | undefined;
  const answered = await burstAndKill(base, apiKey, () => (stopped = signalGroup(first.child, signal)));
  phase('killed');
  const exit = await stopped!;
  phase('exited');
  const undeliveredAtRestart = undelivered(answered).length;
  const second = await startStack(env);
  phase('restarted');
  let lost: string[];
  let vanished: string[];
  let stopCode: number | null;
  try {
    // A ticket the store no longer has: DynamoDB Local acknowledges a TransactWriteItems a few milliseconds
    // before it is durable, so a SIGKILL right after a 201 can undo that write, ticket and outbox item together.
    // Its event was not lost by the pipeline (there is no ticket either), so it is counted apart.
    const gone = await Promise.all(undelivered(answered).map(async (id) => ((await call(base, apiKey, 'GET', `/helpdesk/api/v1/tickets/${id}`)).status === 404 ? [id] : [])));
    vanished = gone.flat();
    const committed = [...answered].filter((id) => !vanished.includes(id));
    await eventually(() => undelivered(committed).length === 0, 45_000, 'every committed ticket delivered').catch(() => undefined);
    lost = undelivered(committed);
    phase('delivered');
  } finally {
    stopCode = await second.stop();
    phase('stopped');
  }
  const summary = { signal, answered201: answered.size, undeliveredAtRestart, vanishedFromStore: vanished.length, lost: lost.length, seconds };
  console.log(JSON.stringify(summary));

  // Assert
  expect(answered.size).toBeGreaterThanOrEqual(KILL_AFTER);
  expect(undeliveredAtRestart, 'the kill came in the middle of the burst: events were still on their way').toBeGreaterThan(0);
  expect(lost, `${lost.length} of ${answered.size - vanished.length} committed tickets never delivered after ${signal} and a restart`).toEqual([]);
  // Only a create answered in the last moments before a SIGKILL can be undone, so at most the requests then in flight.
  expect(vanished.length).toBeLessThanOrEqual(signal === 'SIGKILL' ? CONCURRENCY : 0);
  // On SIGTERM the stack finished or handed over its work and exited cleanly.
  if (signal === 'SIGTERM') expect(exit).toEqual({ code: 0, signal: null });
  expect(stopCode).toBe(0);
}

describe('the local stack across a crash or a Ctrl-C', () => {
  it('SIGKILL of the whole stack mid-burst, then a restart on the same DATA_DIR: every committed ticket has its ticket.created delivered', () => crashAndRestart('SIGKILL'), 120_000);
  it('SIGTERM to the whole stack mid-burst, then a restart on the same DATA_DIR: every committed ticket has its ticket.created delivered', () => crashAndRestart('SIGTERM'), 120_000);
});
