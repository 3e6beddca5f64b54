import { NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { SupportDeskStack } from '../../infra/stack.ts';
import { flattenNestedStacks, foldNestedStacks, type Template as CfnTemplate } from '../../local/lambda/template.ts';

/**
 * Everything a stack deploys as one template: its own resources and its nested stacks' (the email channel, the
 * alarms, the parts of infra/parts.ts), references between them resolved, as the local stack runs it. For assertions
 * about what the service has, wherever it lives; a test about the main template's own limits reads that one alone.
 */
export const deployedTemplate = (stack: Stack): CfnTemplate =>
  foldNestedStacks(stack, Template.fromStack(stack).toJSON() as CfnTemplate, NestedStack, (nested) => Template.fromStack(nested).toJSON() as CfnTemplate);

/**
 * The service's stack with its parts (infra/parts.ts) folded in: what its main template held before features moved
 * to nested stacks of their own. The alarms' and the email channel's nested stacks stay apart, as their tests read them.
 */
export const withParts = (stack: SupportDeskStack): Template =>
  Template.fromJSON(
    flattenNestedStacks(
      Template.fromStack(stack).toJSON() as CfnTemplate,
      new Map(stack.parts.stacks.map((nested) => [stack.getLogicalId(nested.nestedStackResource!), Template.fromStack(nested).toJSON() as CfnTemplate])),
    ),
  );
