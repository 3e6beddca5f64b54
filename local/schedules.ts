/**
 * The template's schedule rules on the local stack: timers at each rule's
 * rate invoking its function with the event EventBridge would pass, and the
 * topology's scheduled jobs on demand (tests).
 */
import { randomUUID } from 'node:crypto';
import { OUTBOX_PUBLISHER, SCHEDULES } from '#app/topology.ts';
import { LOCAL_ACCOUNT, type LocalLambda } from './lambda/index.ts';
import type { LocalFunction } from './lambda/runtime.ts';
import { warn } from './pipeline-log.ts';

/** The scheduled event EventBridge passes to a function on a schedule rule. */
export const scheduledEvent = (ruleArn: string) => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: LOCAL_ACCOUNT,
  time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
  region: 'us-east-1',
  resources: [ruleArn],
  detail: {},
});

export interface ScheduleOptions {
  lambda: LocalLambda;
  region: string;
  /** How the pipeline invokes a function (it counts its invocations). */
  invoke: (fn: LocalFunction, event: unknown) => Promise<unknown>;
  /** The outbox sweep, as the pipeline runs it (its own accounts only, in tests). */
  sweep: () => Promise<unknown>;
  /** How often the sweeper runs (ms; default: its schedule in the template). */
  sweepIntervalMs?: number;
  /** Run every scheduled job on its timer (false: the sweeper only, which is what makes the outbox safe). */
  all: boolean;
}

export interface Schedules {
  /** Run one scheduled job of the topology now, with the event its schedule would pass (tests). */
  runSchedule(name: string, event?: unknown): Promise<unknown>;
  stop(): void;
}

export function startSchedules(o: ScheduleOptions): Schedules {
  const sweeperFn = o.lambda.byEntry(OUTBOX_PUBLISHER.sweeper);
  const ruleArn = (name: string) => `arn:aws:events:${o.region}:${LOCAL_ACCOUNT}:rule/${name}`;
  const timers = o.lambda.deployment.schedules
    .filter((s) => s.functionId === sweeperFn.def.logicalId || o.all)
    .map((s) => {
      const fn = o.lambda.fn(s.functionId);
      const sweeper = fn === sweeperFn;
      const every = sweeper && o.sweepIntervalMs ? o.sweepIntervalMs : s.rateSeconds * 1000;
      const run = () => (sweeper ? o.sweep() : o.invoke(fn, scheduledEvent(ruleArn(s.logicalId))));
      const t = setInterval(() => void run().catch((err) => warn(`scheduled ${fn.name} failed`, { err: (err as Error).message })), every);
      t.unref();
      return t;
    });
  return {
    async runSchedule(name, event = scheduledEvent(ruleArn(name))) {
      const def = SCHEDULES.find((s) => s.name === name);
      if (!def) throw new Error(`No scheduled job ${name}`);
      return o.invoke(o.lambda.byEntry(def.entry), event);
    },
    stop: () => timers.forEach(clearInterval),
  };
}
