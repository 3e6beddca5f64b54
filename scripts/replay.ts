import { DescribeReplayCommand, EventBridgeClient, StartReplayCommand } from '@aws-sdk/client-eventbridge';

export interface ReplayRequest {
  archiveArn: string;
  busArn: string;
  from: Date;
  to: Date;
  /** Rule names (of the bus) or ARNs: the replay reaches only these (Destination.FilterArns); none: every rule. */
  rules: string[];
  /** Local bus only: replay only these detail-types (EventBridge has no such filter). */
  detailTypes: string[];
  name?: string;
  /** Wait until the replay has finished (locally it takes moments; in AWS a replay runs minute by minute of the window). */
  wait: boolean;
}

/**
 * `npm run admin -- replay`: an EventBridge StartReplay from the bus archive,
 * into the named rules, through the SDK (on the local stack, its EventBridge
 * endpoint: AWS_ENDPOINT_URL_EVENTBRIDGE). Answers the replay as DescribeReplay
 * tells it.
 */
export async function replayArchive(r: ReplayRequest, client = new EventBridgeClient({})) {
  const name =
    r.name ??
    `admin-${new Date()
      .toISOString()
      .replace(/[^0-9]/g, '')
      .slice(0, 14)}-${Math.random().toString(36).slice(2, 6)}`;
  const ruleArn = (rule: string) => (rule.startsWith('arn:') ? rule : `${r.busArn.replace(':event-bus/', ':rule/')}/${rule}`);
  const filterArns = r.rules.map(ruleArn);
  if (r.detailTypes.length) {
    // The local bus's one extension of StartReplay (local/bus-control.ts): added to the request body the SDK built.
    client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { body?: unknown };
        const json = request.body instanceof Uint8Array ? new TextDecoder().decode(request.body) : String(request.body);
        request.body = JSON.stringify({ ...JSON.parse(json), DetailTypes: r.detailTypes });
        return next(args);
      },
      { step: 'build', priority: 'high', name: 'localReplayDetailTypes' },
    );
  }
  await client.send(
    new StartReplayCommand({
      ReplayName: name,
      Description: `npm run admin -- replay${r.detailTypes.length ? ` (${r.detailTypes.join(', ')})` : ''}`,
      EventSourceArn: r.archiveArn,
      EventStartTime: r.from,
      EventEndTime: r.to,
      Destination: { Arn: r.busArn, ...(filterArns.length ? { FilterArns: filterArns } : {}) },
    }),
  );
  let replay = await client.send(new DescribeReplayCommand({ ReplayName: name }));
  for (const until = Date.now() + 60_000; r.wait && (replay.State === 'STARTING' || replay.State === 'RUNNING') && Date.now() < until;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    replay = await client.send(new DescribeReplayCommand({ ReplayName: name }));
  }
  if (replay.State === 'FAILED') throw new Error(`replay ${name} failed: ${replay.StateReason ?? 'no reason given'}`);
  return {
    replayName: name,
    replayArn: replay.ReplayArn,
    state: replay.State,
    from: r.from.toISOString(),
    to: r.to.toISOString(),
    rules: filterArns.length ? filterArns : 'all rules of the bus',
    ...(r.detailTypes.length ? { detailTypes: r.detailTypes } : {}),
    lastReplayedEventTime: replay.EventLastReplayedTime?.toISOString() ?? null,
  };
}
