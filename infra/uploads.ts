import { Duration, RemovalPolicy, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import { ReadWriteType, Trail } from 'aws-cdk-lib/aws-cloudtrail';
import { CfnMalwareProtectionPlan } from 'aws-cdk-lib/aws-guardduty';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY } from 'aws-cdk-lib/cx-api';
import { Construct, type IConstruct } from 'constructs';
import { EMAIL_INBOUND } from '#app/topology.ts';
import { objectKeys } from '#shared/attachments/model.ts';
import type { StageConfig } from './config.ts';
import { bundles } from './imports.ts';
import { nagReference } from './nag.ts';

/** The module that holds the S3 client: a function that bundles it is told the bucket. */
export const OBJECT_STORE_MODULE = 'shared/attachments/s3.ts';
/** Presigned uploads and downloads, HeadObject, copies (the messages function): read and write. */
const READ_WRITE_MODULE = 'shared/attachments/objects.ts';
/** The raw mail of a message (GET /messages/{id}/raw): read-only under `inbound/`. */
const RAW_MAIL_MODULE = 'shared/email/raw-mail.ts';
/** Deleting a deleted ticket's objects (the clean-up consumer): list and delete under `attachments/`, nothing else. */
const CLEANUP_MODULE = 'shared/attachments/object-cleanup.ts';
/**
 * SES's receipt events (decisions §17): a function that takes them reads the raw mail the receipt rule stored under
 * `inbound/`, keeps what it refuses under `quarantine/`, and writes the mail's attachments under `attachments/`.
 */
const RECEIPT_EVENTS_MODULE = 'shared/email/ses-events.ts';
/**
 * Privacy (decisions §23): a redacted attachment's object and an erased contact's attachments and raw mail are deleted
 * (under `attachments/` and `inbound/`), and a person's data is written and presigned under `exports/`.
 */
const PRIVACY_MODULE = 'shared/attachments/privacy.ts';

const nagAck = (scope: IConstruct, rule: string, reason: string) => Validations.of(scope).acknowledge({ id: `AwsSolutions::${rule}`, reason });

/**
 * The bucket of uploads and message attachments (decisions §14): no public
 * access, encrypted at rest (SSE-S3), TLS only, bucket-owner objects, CORS
 * for browsers' PUTs from the stage's origins, a lifecycle rule that deletes
 * uploads never attached, access logged (server access logs or CloudTrail
 * data events, per stage), and optionally GuardDuty Malware Protection on
 * the upload prefix. Grants follow the functions' import graphs.
 */
export class Uploads extends Construct {
  readonly bucket: Bucket;
  /** What a function whose bundle holds the S3 client needs to know. */
  readonly environment: Record<string, string>;
  private readonly malwareProtection: boolean;

  constructor(scope: Construct, id: string, props: { config: StageConfig }) {
    super(scope, id);
    const { uploads } = props.config;
    this.malwareProtection = uploads.malwareProtection;
    // S3 delivers access logs under a bucket policy (the log bucket keeps ACLs off), whatever the app's feature flags.
    this.node.setContext(S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);

    const logs = new Bucket(this, 'AccessLogs', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [{ id: 'expire-logs', expiration: Duration.days(uploads.accessLogRetentionDays) }],
    });
    nagAck(logs, 'AwsSolutions-S1', "The uploads bucket's access-log bucket: logging it would log its own log deliveries.");

    const serverAccessLogs = uploads.accessLogging === 'serverAccessLogs';
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      cors: uploads.corsOrigins.length
        ? [{ allowedMethods: [HttpMethods.PUT], allowedOrigins: uploads.corsOrigins, allowedHeaders: ['Content-Type', 'Content-Disposition'], exposedHeaders: ['ETag'], maxAge: 3600 }]
        : undefined,
      // Uploads never attached: a day after they were made (S3 rounds up to the next midnight UTC). Attached ones were copied under their ticket.
      lifecycleRules: [
        { id: 'unattached-uploads', prefix: objectKeys.uploadPrefix, expiration: Duration.days(1), abortIncompleteMultipartUploadAfter: Duration.days(1) },
        // Raw mail as SES received it: its ticket and attachments are copies, so it is kept only to re-run or look into a delivery.
        { id: 'inbound-mail', prefix: EMAIL_INBOUND.objectPrefix, expiration: Duration.days(EMAIL_INBOUND.inboundRetentionDays) },
        { id: 'quarantined-mail', prefix: EMAIL_INBOUND.quarantinePrefix, expiration: Duration.days(EMAIL_INBOUND.quarantineRetentionDays) },
        // A person's data (decisions §23): its download URL lives 15 minutes; the document is gone the next day.
        { id: 'personal-data-exports', prefix: objectKeys.exportPrefix, expiration: Duration.days(1) },
      ],
      ...(serverAccessLogs ? { serverAccessLogsBucket: logs, serverAccessLogsPrefix: 'uploads/' } : {}),
    });
    if (!serverAccessLogs) {
      // Object-level reads and writes of this bucket only (no management events: the account's own trail has those).
      const trail = new Trail(this, 'DataEvents', { bucket: logs, s3KeyPrefix: 'cloudtrail', isMultiRegionTrail: false, includeGlobalServiceEvents: false, managementEvents: ReadWriteType.NONE });
      trail.addS3EventSelector([{ bucket: this.bucket }], { readWriteType: ReadWriteType.ALL, includeManagementEvents: false });
      nagAck(this.bucket, 'AwsSolutions-S1', 'Object-level access is recorded by CloudTrail data events instead (stage setting uploads.accessLogging).');
    }
    this.environment = { UPLOADS_BUCKET: this.bucket.bucketName, ...(uploads.malwareProtection ? { UPLOADS_MALWARE_SCAN: '1' } : {}) };
    if (uploads.malwareProtection) this.scanUploads();
  }

  /**
   * GuardDuty Malware Protection for S3 on the upload prefix: every upload is
   * scanned and tagged `GuardDutyMalwareScanStatus`; a message attaches only
   * `NO_THREATS_FOUND` (shared/attachments/objects.ts). The role is the one
   * GuardDuty documents for a protected bucket.
   */
  private scanUploads() {
    const stack = Stack.of(this);
    const principal = 'malware-protection-plan.guardduty.amazonaws.com';
    const managedRules = stack.formatArn({ service: 'events', resource: 'rule', resourceName: 'DO-NOT-DELETE-AmazonGuardDutyMalwareProtectionS3*' });
    const uploads = this.bucket.arnForObjects(`${objectKeys.uploadPrefix}*`);
    const role = new Role(this, 'MalwareProtectionRole', { assumedBy: new ServicePrincipal(principal), description: 'GuardDuty Malware Protection for S3: scan and tag uploads' });
    const allow = (sid: string, actions: string[], resources: string[], conditions?: Record<string, unknown>) => role.addToPolicy(new PolicyStatement({ sid, actions, resources, conditions }));
    allow('AllowManagedRuleToSendS3EventsToGuardDuty', ['events:PutRule', 'events:DeleteRule', 'events:PutTargets', 'events:RemoveTargets'], [managedRules], {
      StringLike: { 'events:ManagedBy': principal },
    });
    allow('AllowGuardDutyToMonitorEventBridgeManagedRule', ['events:DescribeRule', 'events:ListTargetsByRule'], [managedRules]);
    allow('AllowPostScanTag', ['s3:PutObjectTagging', 's3:GetObjectTagging', 's3:PutObjectVersionTagging', 's3:GetObjectVersionTagging'], [uploads]);
    allow('AllowEnableS3EventBridgeEvents', ['s3:PutBucketNotification', 's3:GetBucketNotification'], [this.bucket.bucketArn]);
    allow('AllowPutValidationObject', ['s3:PutObject'], [this.bucket.arnForObjects('malware-protection-resource-validation-object')]);
    allow('AllowCheckBucketOwnership', ['s3:ListBucket'], [this.bucket.bucketArn]);
    allow('AllowMalwareScan', ['s3:GetObject', 's3:GetObjectVersion'], [uploads]);
    const bucketId = stack.getLogicalId(this.bucket.node.defaultChild as CfnElement);
    const why = "GuardDuty's documented role: its managed EventBridge rules are named by prefix, and it scans and tags every object under uploads/.";
    for (const resource of [`arn:<AWS::Partition>:events:${stack.region}:${stack.account}:rule/DO-NOT-DELETE-AmazonGuardDutyMalwareProtectionS3*`, `<${bucketId}.Arn>/uploads/*`]) {
      Validations.of(role).acknowledge({ id: `AwsSolutions::AwsSolutions-IAM5[Resource::${resource}]`, reason: why });
    }
    const plan = new CfnMalwareProtectionPlan(this, 'MalwareProtection', {
      role: role.roleArn,
      protectedResource: { s3Bucket: { bucketName: this.bucket.bucketName, objectPrefixes: [objectKeys.uploadPrefix] } },
      actions: { tagging: { status: 'ENABLED' } },
    });
    plan.node.addDependency(role);
  }

  /**
   * Grant what the function's bundle can do with the bucket, and nothing
   * else: the messages function (objects.ts) presigns uploads, reads them,
   * copies them under the ticket, presigns downloads and deletes its own
   * failed copies; the clean-up consumer (object-cleanup.ts) lists and
   * deletes under `attachments/`. Listing the upload prefix lets HeadObject
   * answer "missing" (404) rather than "forbidden" (403).
   */
  grantTo(fn: IFunction, entry: string): void {
    const uploads = this.bucket.arnForObjects(`${objectKeys.uploadPrefix}*`);
    const attachments = this.bucket.arnForObjects(`${objectKeys.attachmentPrefix}*`);
    const list = (prefix: string) => new PolicyStatement({ actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn], conditions: { StringLike: { 's3:prefix': [`${prefix}*`] } } });
    let granted = false;
    if (bundles(entry, READ_WRITE_MODULE)) {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObject', 's3:GetObject'], resources: [uploads] }));
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'], resources: [attachments] }));
      fn.addToRolePolicy(list(objectKeys.uploadPrefix));
      // Scanned uploads carry GuardDuty's tag, which the copy takes along.
      if (this.malwareProtection) {
        fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObjectTagging'], resources: [uploads] }));
        fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObjectTagging'], resources: [attachments] }));
      }
      granted = true;
    }
    if (bundles(entry, CLEANUP_MODULE)) {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:DeleteObject'], resources: [attachments] }));
      fn.addToRolePolicy(list(objectKeys.attachmentPrefix));
      granted = true;
    }
    if (bundles(entry, RECEIPT_EVENTS_MODULE)) {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: [this.bucket.arnForObjects(`${EMAIL_INBOUND.objectPrefix}*`)] }));
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObject'], resources: [this.bucket.arnForObjects(`${EMAIL_INBOUND.quarantinePrefix}*`), attachments] }));
      // A mail already expired reads as missing (404), not forbidden.
      fn.addToRolePolicy(list(EMAIL_INBOUND.objectPrefix));
      granted = true;
    }
    if (bundles(entry, RAW_MAIL_MODULE)) {
      // GET /messages/{id}/raw (decisions §24): the received mail, as the receipt rule stored it; an expired one reads as missing.
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: [this.bucket.arnForObjects(`${EMAIL_INBOUND.objectPrefix}*`)] }));
      fn.addToRolePolicy(list(EMAIL_INBOUND.objectPrefix));
      granted = true;
    }
    if (bundles(entry, PRIVACY_MODULE)) {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:DeleteObject'], resources: [attachments, this.bucket.arnForObjects(`${EMAIL_INBOUND.objectPrefix}*`)] }));
      fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObject', 's3:GetObject'], resources: [this.bucket.arnForObjects(`${objectKeys.exportPrefix}*`)] }));
      granted = true;
    }
    if (granted && fn.role) {
      const arn = nagReference(fn, this.bucket.node.defaultChild as CfnElement, 'Arn');
      for (const prefix of [objectKeys.uploadPrefix, objectKeys.attachmentPrefix, EMAIL_INBOUND.objectPrefix, EMAIL_INBOUND.quarantinePrefix, objectKeys.exportPrefix]) {
        Validations.of(fn.role).acknowledge({
          id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${arn}>/${prefix}*]`,
          reason: "Objects are created at run time under the bucket's fixed prefixes (uploads/, attachments/, inbound/, quarantine/, exports/); the grant is limited to the prefixes the code uses.",
        });
      }
    }
  }
}
