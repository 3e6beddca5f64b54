import { Arn, ArnFormat, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Archive, CfnRule, EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { AccountPrincipal, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** The events this subscriber wants, as an EventBridge event pattern: resolved tickets. */
export const TICKET_RESOLVED = { source: ['support-desk.tickets'], 'detail-type': ['ticket.resolved'] };

export interface TicketResolvedSubscriberProps extends StackProps {
  /** The Support Desk bus: its stack's EventBusArn output, e.g. arn:aws:events:eu-west-1:222222222222:event-bus/SupportDesk-prod-events */
  supportDeskBusArn: string;
}

/**
 * Another team's stack, in its own account (one the Support Desk stage lists
 * in eventSubscribers): its rule on the Support Desk bus sends ticket.resolved
 * to this account's inbox bus, and a rule there hands it to an SQS queue.
 * The first rule lives in the Support Desk account (created by, and only
 * changeable by, this one); a target in another account than its rule needs an
 * execution role in the rule's account, except an event bus that admits it, so
 * the events cross into an own bus first, which also keeps its own archive.
 */
export class TicketResolvedSubscriber extends Stack {
  readonly queue: Queue;

  constructor(scope: Construct, id: string, props: TicketResolvedSubscriberProps) {
    super(scope, id, props);
    const supportDeskAccount = Arn.split(props.supportDeskBusArn, ArnFormat.SLASH_RESOURCE_NAME).account!;

    const inbox = new EventBus(this, 'SupportDeskInbox', { eventBusName: 'support-desk-inbox' });
    inbox.addToResourcePolicy(new PolicyStatement({ sid: 'FromSupportDesk', principals: [new AccountPrincipal(supportDeskAccount)], actions: ['events:PutEvents'], resources: [inbox.eventBusArn] }));
    new Archive(this, 'InboxArchive', { sourceEventBus: inbox, eventPattern: { source: TICKET_RESOLVED.source, detailType: TICKET_RESOLVED['detail-type'] }, retention: Duration.days(30) });

    // The rule on the Support Desk bus, named by the bus's ARN; it forwards to the inbox, whose policy admits that account.
    new CfnRule(this, 'TicketResolvedOnSupportDesk', {
      eventBusName: props.supportDeskBusArn,
      eventPattern: TICKET_RESOLVED,
      targets: [{ id: 'inbox', arn: inbox.eventBusArn }],
    });

    const dlq = new Queue(this, 'TicketResolvedDlq', { enforceSSL: true, retentionPeriod: Duration.days(14) });
    this.queue = new Queue(this, 'TicketResolved', { enforceSSL: true, deadLetterQueue: { queue: dlq, maxReceiveCount: 5 } });
    new Rule(this, 'TicketResolvedToQueue', {
      eventBus: inbox,
      eventPattern: { source: TICKET_RESOLVED.source, detailType: TICKET_RESOLVED['detail-type'] },
      targets: [new SqsQueue(this.queue, { deadLetterQueue: dlq })],
    });
  }
}
