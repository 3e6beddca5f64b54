import { type CfnElement, Names, Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Acknowledge a cdk-nag AwsSolutions finding on a construct, with the reason it is accepted. */
export const nagAck = (scope: IConstruct, rule: string, reason: string) => Validations.of(scope).acknowledge({ id: `AwsSolutions::AwsSolutions-${rule}`, reason });

/**
 * How a finding of cdk-nag names an attribute of `resource` as a policy in `consumer`'s stack refers to it:
 * `<LogicalId.Arn>` in the resource's own stack; in a nested stack, the parameter CDK passes it through
 * (`reference-to-<the resource's unique id><attribute>`, as a logical id).
 */
export function nagReference(consumer: IConstruct, resource: CfnElement, attribute: 'Arn'): string {
  const home = Stack.of(resource);
  if (Stack.of(consumer) === home) return `${home.getLogicalId(resource)}.${attribute}`;
  return `referenceto${Names.nodeUniqueId(resource.node)}${attribute}`;
}
