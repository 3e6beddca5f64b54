import * as z from 'zod';
import { plainText } from '../text.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';
import { CONDITION_OPS, CONDITION_FIELDS, ACTION_FIELDS, CUSTOM_FIELD_PREFIX, MAX_AUTOMATIONS, MAX_CONDITIONS, MAX_ACTIONS } from './limits.ts';

export * from './limits.ts';

/** The field-name rule as JSON Schema for the OpenAPI document (validation itself names the known fields in its message). */
const fieldNames = (names: readonly string[]) => ({ anyOf: [{ enum: [...names] }, { pattern: `^${CUSTOM_FIELD_PREFIX}\\S+$` }] });

export { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES };

const scalar = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]);
const conditionValue = z.union([
  scalar,
  z
    .array(z.union([z.string().max(1000), z.number()]))
    .min(1)
    .max(100),
]);

export const ConditionSchema = z
  .object({
    field: z
      .string()
      .min(1)
      .max(100)
      .describe(`One of ${CONDITION_FIELDS.join(', ')}, or customField:<ticket field id>`)
      .meta(fieldNames(CONDITION_FIELDS)),
    op: z.enum(CONDITION_OPS),
    value: conditionValue.describe('A scalar, or an array for containsoneormoreof / containsnoneof; null means "not set" with equals / notequal'),
  })
  .meta({ id: 'AutomationCondition' });
export type Condition = z.infer<typeof ConditionSchema>;

export const ActionSchema = z
  .object({
    field: z
      .string()
      .min(1)
      .max(100)
      .describe(`One of ${ACTION_FIELDS.join(', ')}, or customField:<ticket field id>`)
      .meta(fieldNames(ACTION_FIELDS)),
    value: conditionValue.describe('The value to set (status may be closed); an array of tags for addTags / removeTags; null clears assigneeId, groupId or a custom field'),
  })
  .meta({ id: 'AutomationAction' });
export type Action = z.infer<typeof ActionSchema>;

export const RuleSchema = z
  .object({
    all: z.array(ConditionSchema).max(MAX_CONDITIONS).optional().describe('Every condition must hold'),
    any: z.array(ConditionSchema).max(MAX_CONDITIONS).optional().describe('At least one condition must hold (when given and non-empty)'),
    actions: z.array(ActionSchema).min(1).max(MAX_ACTIONS),
  })
  .meta({ id: 'AutomationRule', description: 'At least one condition (in all or any) and one action. See docs/automations.md for fields, operators and their value types.' });
export type Rule = z.infer<typeof RuleSchema>;

export const AutomationSchema = z
  .object({
    id: z.string().describe('Prefixed aut_'),
    name: z.string(),
    description: z.string().nullable(),
    isActive: z.boolean(),
    rule: RuleSchema,
    position: z.number().int().describe('Evaluation order, 1 = first'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Automation' });
export type Automation = z.infer<typeof AutomationSchema>;

const automationInput = {
  name: plainText(128),
  description: z.string().max(512).nullable(),
  isActive: z.boolean(),
  rule: RuleSchema,
};

export const CreateAutomationBodySchema = z
  .object({ ...automationInput, description: automationInput.description.optional().default(null), isActive: automationInput.isActive.default(true) })
  .meta({ id: 'CreateAutomationRequest' });
export type CreateAutomationInput = z.infer<typeof CreateAutomationBodySchema>;

export const UpdateAutomationBodySchema = z
  .object(automationInput)
  .partial()
  .meta({ id: 'UpdateAutomationRequest', description: 'The create shape; only the given fields change (rule is replaced as a whole).' });
export type UpdateAutomationInput = z.infer<typeof UpdateAutomationBodySchema>;

export const ReorderAutomationsBodySchema = z
  .object({ orderedIds: z.array(z.string().min(1).max(64)).max(MAX_AUTOMATIONS).describe('Every automation id of the account, exactly once, first to evaluate first') })
  .meta({ id: 'ReorderAutomationsRequest' });

export const AutomationIdParamsSchema = z.object({ automationId: z.string().min(1).max(64) });

/** A ticket given to the dry run instead of a stored one; missing fields are "not set". */
export const DryRunTicketSchema = z
  .object({
    subject: z.string().max(255).optional(),
    status: z.enum(TICKET_STATUSES).optional(),
    priority: z.enum(TICKET_PRIORITIES).optional(),
    type: z.enum(TICKET_TYPES).optional(),
    tags: z.array(z.string().max(64)).max(100).optional(),
    assigneeId: z.string().max(64).nullable().optional(),
    requesterEmail: z.string().max(254).nullable().optional(),
    groupId: z.string().max(64).nullable().optional(),
    customFields: z
      .array(z.object({ id: z.string().min(1).max(64), value: z.unknown() }))
      .max(200)
      .optional(),
    createdAt: z.iso.datetime().optional(),
    updatedAt: z.iso.datetime().optional(),
  })
  .meta({ id: 'AutomationDryRunTicket' });

export const DryRunBodySchema = z
  .object({
    ticketId: z.string().min(1).max(64).optional().describe('A ticket of the account'),
    ticket: DryRunTicketSchema.optional().describe('Or a ticket described inline'),
    now: z.iso.datetime().optional().describe('The clock for hoursSince* conditions (default: now)'),
  })
  .meta({ id: 'AutomationDryRunRequest', description: 'Exactly one of ticketId or ticket. Nothing is written.' });
export type DryRunInput = z.infer<typeof DryRunBodySchema>;

const change = z.object({ field: z.string(), from: z.unknown(), to: z.unknown() });

export const DryRunResultSchema = z
  .object({
    now: z.iso.datetime(),
    matchedAutomationId: z.string().nullable().describe('The automation that would apply: the first active one, by position, whose rule holds'),
    changes: z.array(change).describe('What its actions would change on the ticket (empty when nothing would change)'),
    automations: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        position: z.number().int(),
        isActive: z.boolean(),
        matched: z.boolean().describe('The rule holds for the ticket (inactive automations are evaluated too, but never apply)'),
        conditions: z.array(
          z.object({
            group: z.enum(['all', 'any']),
            index: z.number().int(),
            field: z.string(),
            op: z.enum(CONDITION_OPS),
            value: z.unknown(),
            actual: z.unknown().describe("The ticket's value of the field (null when not set)"),
            held: z.boolean(),
          }),
        ),
      }),
    ),
  })
  .meta({ id: 'AutomationDryRunResult' });
export type DryRunResult = z.infer<typeof DryRunResultSchema>;
