import { Duration, NestedStack, Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { ConfigurationSet, EmailIdentity, EmailSendingEvent, EventDestination, Identity, ReceiptRuleSet, TlsPolicy } from 'aws-cdk-lib/aws-ses';
import { Lambda, LambdaInvocationType, S3 } from 'aws-cdk-lib/aws-ses-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { LambdaSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { EMAIL_INBOUND, MESSAGE_RETENTION_SECONDS } from '#app/topology.ts';
import type { StageConfig } from './config.ts';
import type { Functions } from './functions.ts';
import { nagAck } from './nag.ts';
import type { Uploads } from './uploads.ts';

/**
 * The email channel's AWS side (decisions §17), in a nested stack `Email`:
 * the stack itself is at CloudFormation's 500 resources (prod: 500 with the
 * CDK's metadata resource; see infra/operations.ts), and nothing here existed
 * before, so no logical id moves.
 *
 * - Receiving: the inbound domain's identity (its DKIM records, docs/email.md),
 *   and a receipt rule set whose one rule takes mail for the domain, scans it
 *   for spam and viruses, stores the raw message in the uploads bucket under
 *   `inbound/`, then invokes the inbound function asynchronously. The rule set
 *   is named and must be made active by hand (an account has one active set).
 * - Sending: the configuration set the email sender sends with, whose bounces
 *   and complaints go to an encrypted, TLS-only SNS topic that the same
 *   function subscribes to.
 * - An invocation that still fails after Lambda's retries (or a notification
 *   SNS cannot deliver) is kept in `email-inbound-failures`, alarmed like every
 *   dead-letter queue; the raw mail stays in the bucket for its retention.
 */
export class EmailChannel {
  readonly stack: NestedStack;
  readonly inbound: LambdaFunction;
  /** Named, so the platform team can activate it (`aws ses set-active-receipt-rule-set`). */
  readonly receiptRuleSetName: string;
  /** The configuration set every outbound mail is sent with (SES_CONFIGURATION_SET of the sender). */
  readonly configurationSet: ConfigurationSet;
  /** Its name, a plain string: the sender's environment and policy need no value out of the nested stack. */
  readonly configurationSetName: string;
  readonly failures: Queue;
  readonly identity: EmailIdentity;

  constructor(scope: Stack, props: { config: StageConfig; functions: Functions; uploads: Uploads }) {
    const { config, functions, uploads } = props;
    const stack = new NestedStack(scope, 'Email', { description: `Email channel of ${scope.stackName}: receiving for ${config.inboundDomain}, bounce and complaint notifications` });
    this.stack = stack;

    this.failures = new Queue(stack, 'email-inbound-failures', {
      retentionPeriod: Duration.seconds(MESSAGE_RETENTION_SECONDS),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    nagAck(this.failures, 'SQS3', "The inbound function's on-failure destination and the SNS subscription's dead-letter queue, i.e. a dead-letter queue itself; its depth is alarmed.");

    this.inbound = functions.add({
      id: 'EmailInbound',
      entry: EMAIL_INBOUND.entry,
      description: EMAIL_INBOUND.description,
      tableAccess: 'readWrite',
      timeoutSeconds: EMAIL_INBOUND.functionTimeoutSeconds,
      scope: stack,
    });
    // SES and SNS invoke it asynchronously: Lambda retries twice, then the event is kept here instead of dropped.
    this.inbound.configureAsyncInvoke({ onFailure: new SqsDestination(this.failures), retryAttempts: 2, maxEventAge: Duration.hours(6) });

    // --- Receiving.
    this.identity = new EmailIdentity(stack, 'InboundIdentity', { identity: Identity.domain(config.inboundDomain) });
    this.receiptRuleSetName = `${scope.stackName}-inbound`;
    const ruleSet = new ReceiptRuleSet(stack, 'InboundRuleSet', { receiptRuleSetName: this.receiptRuleSetName });
    ruleSet.addRule('Inbound', {
      receiptRuleName: 'inbound-mail',
      recipients: [config.inboundDomain],
      // SES's spam and virus verdicts reach the function in the event; it quarantines what fails them.
      scanEnabled: true,
      // Customers' servers that cannot do TLS still reach support.
      tlsPolicy: TlsPolicy.OPTIONAL,
      actions: [new S3({ bucket: uploads.bucket, objectKeyPrefix: EMAIL_INBOUND.objectPrefix }), new Lambda({ function: this.inbound, invocationType: LambdaInvocationType.EVENT })],
    });

    // --- Sending: bounces and complaints of what the email sender sends.
    const key = new Key(stack, 'NotificationsKey', { enableKeyRotation: true, description: `SES notifications of ${scope.stackName} (SNS encryption)` });
    // SES publishes to the encrypted topic, so it needs the key (an AWS managed key cannot be shared with it).
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('ses.amazonaws.com')],
        actions: ['kms:GenerateDataKey*', 'kms:Decrypt'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': scope.account } },
      }),
    );
    const topic = new Topic(stack, 'SesNotifications', { topicName: `${scope.stackName}-ses-notifications`, masterKey: key, enforceSSL: true });
    topic.addSubscription(new LambdaSubscription(this.inbound, { deadLetterQueue: this.failures }));
    this.configurationSetName = `${scope.stackName}-sending`;
    this.configurationSet = new ConfigurationSet(stack, 'Sending', { configurationSetName: this.configurationSetName });
    this.configurationSet.addEventDestination('BouncesAndComplaints', {
      destination: EventDestination.snsTopic(topic),
      events: [EmailSendingEvent.BOUNCE, EmailSendingEvent.COMPLAINT],
    });
  }

  /** Let a function send mail as the stage's sender with the configuration set (SES v2 SendEmail, raw MIME included). */
  grantSend(fn: LambdaFunction, config: StageConfig): void {
    const stack = Stack.of(fn);
    const identity = config.emailFrom.split('@').pop()!;
    fn.addEnvironment('SES_CONFIGURATION_SET', this.configurationSetName);
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail', 'ses:SendRawEmail'],
        resources: [
          stack.formatArn({ service: 'ses', resource: 'identity', resourceName: identity }),
          stack.formatArn({ service: 'ses', resource: 'configuration-set', resourceName: this.configurationSetName }),
        ],
      }),
    );
    // Never sent before the configuration set exists (SES refuses a send naming an unknown set).
    fn.node.addDependency(this.stack);
  }
}
