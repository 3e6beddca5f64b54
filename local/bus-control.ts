import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { escapeForTransport } from '#shared/events/transport.ts';
import type { BusEvent, LocalArchive } from './archive.ts';
import { targetQueues, type LocalRule } from './bus-rules.ts';
import { matchesPattern } from './lambda/patterns.ts';

/** What an EventBridge call the local bus refuses answers: `__type` and message, HTTP 400. */
export class BusRequestError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = type;
  }
}

type ReplayState = 'STARTING' | 'RUNNING' | 'COMPLETED' | 'FAILED';

interface Replay {
  name: string;
  arn: string;
  description?: string;
  state: ReplayState;
  stateReason?: string;
  eventSourceArn: string;
  destination: { Arn: string; FilterArns?: string[] };
  start: Date;
  end: Date;
  lastReplayed?: Date;
  replayStart: Date;
  replayEnd?: Date;
}

export interface BusControlOptions {
  busName: string;
  busArn: string;
  region: string;
  account: string;
  /** The bus's rules: the template's, and those added here (PutRule), routed by the bus as they change. */
  rules: LocalRule[];
  archive?: LocalArchive;
  archiveArn?: string;
  sqs: SQSClient;
  sqsEndpoint: string;
}

const seconds = (d: Date | undefined) => (d ? d.getTime() / 1000 : undefined);
const time = (v: unknown, name: string) => {
  const d = new Date(Number(v) * 1000);
  if (v === undefined || Number.isNaN(d.getTime())) throw new BusRequestError('ValidationException', `${name} is required (a timestamp)`);
  return d;
};

/**
 * The local bus's control plane, as EventBridge answers it (AWS JSON 1.1):
 * - rules added at run time, as a subscriber adds its own to our bus from
 *   another account (PutRule, PutTargets, RemoveTargets, DeleteRule) with SQS
 *   targets; the template's rules are the stack's and cannot be changed here;
 * - replays from the archive (StartReplay, DescribeReplay): the archived events
 *   of a time window are sent again, with `replay-name`, to the bus's rules
 *   (only those named in Destination.FilterArns, if any) that match them. Local
 *   extension: `DetailTypes` narrows a replay to those detail-types (the admin
 *   CLI's `--detail-type`); EventBridge replays every archived event of the window.
 * Rules added here live as long as the process (EventBridge keeps them).
 */
export function busControl(o: BusControlOptions) {
  const replays = new Map<string, Replay>();
  const ruleArn = (name: string) => `arn:aws:events:${o.region}:${o.account}:rule/${o.busName}/${name}`;
  const queueUrl = (arn: string) => {
    const m = /^arn:aws:sqs:[^:]+:(\d{12}):([\w-]+)$/.exec(arn);
    if (!m) throw new BusRequestError('ValidationException', `Only SQS queue targets are supported locally (got ${arn})`);
    return `${o.sqsEndpoint}/${m[1]}/${m[2]}`;
  };
  const onThisBus = (bus: string | undefined) => {
    if ((bus ?? 'default') !== o.busName && bus !== o.busArn) throw new BusRequestError('ResourceNotFoundException', `Event bus ${bus ?? 'default'} does not exist.`);
  };
  const ownRule = (name: unknown) => {
    const rule = o.rules.find((r) => r.name === name);
    if (!rule) throw new BusRequestError('ResourceNotFoundException', `Rule ${String(name)} does not exist on EventBus ${o.busName}.`);
    if (!rule.targets) throw new BusRequestError('ManagedRuleException', `Rule ${String(name)} is the stack's own (its template's); it cannot be changed here.`);
    return rule as LocalRule & { targets: Map<string, string> };
  };

  async function replay(r: Replay, detailTypes: string[] | undefined) {
    r.state = 'RUNNING';
    try {
      for await (const event of o.archive!.read(r.start, r.end)) {
        if (detailTypes && !detailTypes.includes(event['detail-type'])) continue;
        const again: BusEvent = { ...event, 'replay-name': r.name };
        const rules = o.rules.filter((rule) => !r.destination.FilterArns || (rule.name && r.destination.FilterArns.includes(ruleArn(rule.name))));
        const urls = targetQueues(rules, again);
        const body = escapeForTransport(JSON.stringify(again));
        await Promise.all(urls.map((QueueUrl) => o.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body }))));
        r.lastReplayed = new Date(Date.parse(event.time));
      }
      r.state = 'COMPLETED';
    } catch (err) {
      r.state = 'FAILED';
      r.stateReason = (err as Error).message;
    } finally {
      r.replayEnd = new Date();
    }
  }

  const operations: Record<string, (input: any) => Promise<unknown> | unknown> = {
    PutRule(input: { Name?: string; EventPattern?: string; EventBusName?: string; State?: string; ScheduleExpression?: string }) {
      onThisBus(input.EventBusName);
      if (!input.Name || !/^[.\-_A-Za-z0-9]{1,64}$/.test(input.Name)) throw new BusRequestError('ValidationException', 'Name must be 1-64 characters of [.-_A-Za-z0-9]');
      if (input.ScheduleExpression) throw new BusRequestError('ValidationException', 'ScheduleExpression is supported only on the default event bus.');
      let pattern: Record<string, unknown>;
      try {
        pattern = JSON.parse(input.EventPattern ?? '');
        matchesPattern(pattern, {});
      } catch (err) {
        throw new BusRequestError('InvalidEventPatternException', `Event pattern is not valid. Reason: ${(err as Error).message}`);
      }
      const existing = o.rules.find((r) => r.name === input.Name);
      const rule = existing ? ownRule(input.Name) : ({ name: input.Name, pattern, queueUrls: [], targets: new Map<string, string>() } as LocalRule & { targets: Map<string, string> });
      Object.assign(rule, { pattern, enabled: input.State !== 'DISABLED' });
      if (!existing) o.rules.push(rule);
      return { RuleArn: ruleArn(input.Name) };
    },
    PutTargets(input: { Rule?: string; EventBusName?: string; Targets?: Array<{ Id: string; Arn: string }> }) {
      onThisBus(input.EventBusName);
      const rule = ownRule(input.Rule);
      const failed: Array<{ TargetId: string; ErrorCode: string; ErrorMessage: string }> = [];
      for (const t of input.Targets ?? []) {
        try {
          rule.targets.set(t.Id, queueUrl(t.Arn));
        } catch (err) {
          failed.push({ TargetId: t.Id, ErrorCode: 'ValidationException', ErrorMessage: (err as Error).message });
        }
      }
      rule.queueUrls = [...rule.targets.values()];
      return { FailedEntryCount: failed.length, FailedEntries: failed };
    },
    RemoveTargets(input: { Rule?: string; EventBusName?: string; Ids?: string[] }) {
      onThisBus(input.EventBusName);
      const rule = ownRule(input.Rule);
      for (const id of input.Ids ?? []) rule.targets.delete(id);
      rule.queueUrls = [...rule.targets.values()];
      return { FailedEntryCount: 0, FailedEntries: [] };
    },
    DeleteRule(input: { Name?: string; EventBusName?: string }) {
      onThisBus(input.EventBusName);
      const rule = ownRule(input.Name);
      if (rule.targets.size) throw new BusRequestError('ValidationException', "Rule can't be deleted since it has targets.");
      o.rules.splice(o.rules.indexOf(rule), 1);
      return {};
    },
    StartReplay(input: {
      ReplayName?: string;
      Description?: string;
      EventSourceArn?: string;
      EventStartTime?: number;
      EventEndTime?: number;
      Destination?: { Arn?: string; FilterArns?: string[] };
      DetailTypes?: string[];
    }) {
      const name = input.ReplayName ?? '';
      if (!/^[.\-_A-Za-z0-9]{1,64}$/.test(name)) throw new BusRequestError('ValidationException', 'ReplayName must be 1-64 characters of [.-_A-Za-z0-9]');
      if (replays.has(name)) throw new BusRequestError('ResourceAlreadyExistsException', `Replay ${name} already exists.`);
      if (!o.archive || input.EventSourceArn !== o.archiveArn) throw new BusRequestError('ResourceNotFoundException', `Archive ${input.EventSourceArn} does not exist.`);
      const [start, end] = [time(input.EventStartTime, 'EventStartTime'), time(input.EventEndTime, 'EventEndTime')];
      if (start >= end) throw new BusRequestError('ValidationException', 'Parameter EventStartTime is not valid. Reason: EventStartTime must be before EventEndTime.');
      if (input.Destination?.Arn !== o.busArn) throw new BusRequestError('ValidationException', 'Parameter Destination.Arn is not valid. Reason: Cross event bus replay is not permitted.');
      const filterArns = input.Destination.FilterArns?.length ? input.Destination.FilterArns : undefined;
      for (const arn of filterArns ?? []) {
        if (!o.rules.some((r) => r.name && ruleArn(r.name) === arn))
          throw new BusRequestError('ValidationException', `Parameter Destination.FilterArns is not valid. Reason: rule ${arn} does not exist on the event bus.`);
      }
      const r: Replay = {
        name,
        arn: `arn:aws:events:${o.region}:${o.account}:replay/${name}`,
        description: input.Description,
        state: 'STARTING',
        eventSourceArn: o.archiveArn!,
        destination: { Arn: o.busArn, ...(filterArns ? { FilterArns: filterArns } : {}) },
        start,
        end,
        replayStart: new Date(),
      };
      replays.set(name, r);
      void replay(r, input.DetailTypes?.length ? input.DetailTypes : undefined);
      return { ReplayArn: r.arn, State: 'STARTING', ReplayStartTime: seconds(r.replayStart) };
    },
    DescribeReplay(input: { ReplayName?: string }) {
      const r = replays.get(input.ReplayName ?? '');
      if (!r) throw new BusRequestError('ResourceNotFoundException', `Replay ${input.ReplayName} does not exist.`);
      return {
        ReplayName: r.name,
        ReplayArn: r.arn,
        Description: r.description,
        State: r.state,
        StateReason: r.stateReason,
        EventSourceArn: r.eventSourceArn,
        Destination: r.destination,
        EventStartTime: seconds(r.start),
        EventEndTime: seconds(r.end),
        EventLastReplayedTime: seconds(r.lastReplayed),
        ReplayStartTime: seconds(r.replayStart),
        ReplayEndTime: seconds(r.replayEnd),
      };
    },
  };

  return {
    ruleArn,
    /** Answer one control-plane call (`AWSEvents.<Operation>`), or refuse an operation the local bus does not implement. */
    async handle(operation: string, input: unknown): Promise<unknown> {
      const op = operations[operation];
      if (!op) throw new BusRequestError('UnknownOperationException', `The local bus implements PutEvents, ${Object.keys(operations).join(', ')} (got ${operation || 'no target'})`);
      return op(input ?? {});
    },
  };
}
