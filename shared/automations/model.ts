import * as z from '../zod.ts';
import { plainText } from '../text.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';
import { CONDITION_OPS, CONDITION_FIELDS, ACTION_FIELDS, CUSTOM_FIELD_PREFIX, MAX_AUTOMATIONS, MAX_CONDITIONS, MAX_ACTIONS } from './limits.ts';

export * from './limits.ts';

/** The field-name rule as JSON Schema for the OpenAPI document (validation itself names the known fields in its message). */
const fieldNames = (names: readonly string[]) => ({ anyOf: [{ enum: [...names] }, { pattern: `^${CUSTOM_FIELD_PREFIX}\\S+$` }] });

export { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES };

const scalar = z.union([z.string().check(z.maxLength(1000)), z.number(), z.boolean(), z.null()]);
const conditionValue = z.union([scalar, z.array(z.union([z.string().check(z.maxLength(1000)), z.number()])).check(z.minLength(1), z.maxLength(100))]);

export const ConditionSchema = z.meta(
  z.object({
    field: z.meta(z.describe(z.string().check(z.minLength(1), z.maxLength(100)), `One of ${CONDITION_FIELDS.join(', ')}, or customField:<ticket field id>`), fieldNames(CONDITION_FIELDS)),
    op: z.enum(CONDITION_OPS),
    value: z.describe(conditionValue, 'A scalar, or an array for containsoneormoreof / containsnoneof; null means "not set" with equals / notequal'),
  }),
  { id: 'AutomationCondition' },
);
export type Condition = z.infer<typeof ConditionSchema>;

export const ActionSchema = z.meta(
  z.object({
    field: z.meta(z.describe(z.string().check(z.minLength(1), z.maxLength(100)), `One of ${ACTION_FIELDS.join(', ')}, or customField:<ticket field id>`), fieldNames(ACTION_FIELDS)),
    value: z.describe(conditionValue, 'The value to set (status may be closed); an array of tags for addTags / removeTags; null clears assigneeId, groupId or a custom field'),
  }),
  { id: 'AutomationAction' },
);
export type Action = z.infer<typeof ActionSchema>;

export const RuleSchema = z.meta(
  z.object({
    all: z.describe(z.optional(z.array(ConditionSchema).check(z.maxLength(MAX_CONDITIONS))), 'Every condition must hold'),
    any: z.describe(z.optional(z.array(ConditionSchema).check(z.maxLength(MAX_CONDITIONS))), 'At least one condition must hold (when given and non-empty)'),
    actions: z.array(ActionSchema).check(z.minLength(1), z.maxLength(MAX_ACTIONS)),
  }),
  { id: 'AutomationRule', description: 'At least one condition (in all or any) and one action. See docs/automations.md for fields, operators and their value types.' },
);
export type Rule = z.infer<typeof RuleSchema>;

export const AutomationSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed aut_'),
    name: z.string(),
    description: z.nullable(z.string()),
    isActive: z.boolean(),
    rule: RuleSchema,
    position: z.describe(z.number().check(z.int()), 'Evaluation order, 1 = first'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  }),
  { id: 'Automation' },
);
export type Automation = z.infer<typeof AutomationSchema>;

const automationInput = {
  name: plainText(128),
  description: z.nullable(z.string().check(z.maxLength(512))),
  isActive: z.boolean(),
  rule: RuleSchema,
};

export const CreateAutomationBodySchema = z.meta(
  z.object({ ...automationInput, description: z._default(z.optional(automationInput.description), null), isActive: z._default(automationInput.isActive, true) }),
  { id: 'CreateAutomationRequest' },
);
export type CreateAutomationInput = z.infer<typeof CreateAutomationBodySchema>;

export const UpdateAutomationBodySchema = z.meta(z.partial(z.object(automationInput)), {
  id: 'UpdateAutomationRequest',
  description: 'The create shape; only the given fields change (rule is replaced as a whole).',
});
export type UpdateAutomationInput = z.infer<typeof UpdateAutomationBodySchema>;

export const ReorderAutomationsBodySchema = z.meta(
  z.object({
    orderedIds: z.describe(z.array(z.string().check(z.minLength(1), z.maxLength(64))).check(z.maxLength(MAX_AUTOMATIONS)), 'Every automation id of the account, exactly once, first to evaluate first'),
  }),
  { id: 'ReorderAutomationsRequest' },
);

export const AutomationIdParamsSchema = z.object({ automationId: z.string().check(z.minLength(1), z.maxLength(64)) });

/** A ticket given to the dry run instead of a stored one; missing fields are "not set". */
export const DryRunTicketSchema = z.meta(
  z.object({
    subject: z.optional(z.string().check(z.maxLength(255))),
    status: z.optional(z.enum(TICKET_STATUSES)),
    priority: z.optional(z.enum(TICKET_PRIORITIES)),
    type: z.optional(z.enum(TICKET_TYPES)),
    tags: z.optional(z.array(z.string().check(z.maxLength(64))).check(z.maxLength(100))),
    assigneeId: z.optional(z.nullable(z.string().check(z.maxLength(64)))),
    requesterEmail: z.optional(z.nullable(z.string().check(z.maxLength(254)))),
    groupId: z.optional(z.nullable(z.string().check(z.maxLength(64)))),
    customFields: z.optional(z.array(z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)), value: z.unknown() })).check(z.maxLength(200))),
    createdAt: z.optional(z.iso.datetime()),
    updatedAt: z.optional(z.iso.datetime()),
  }),
  { id: 'AutomationDryRunTicket' },
);

export const DryRunBodySchema = z.meta(
  z.object({
    ticketId: z.describe(z.optional(z.string().check(z.minLength(1), z.maxLength(64))), 'A ticket of the account'),
    ticket: z.describe(z.optional(DryRunTicketSchema), 'Or a ticket described inline'),
    now: z.describe(z.optional(z.iso.datetime()), 'The clock for hoursSince* conditions (default: now)'),
  }),
  { id: 'AutomationDryRunRequest', description: 'Exactly one of ticketId or ticket. Nothing is written.' },
);
export type DryRunInput = z.infer<typeof DryRunBodySchema>;

const change = z.object({ field: z.string(), from: z.unknown(), to: z.unknown() });

export const DryRunResultSchema = z.meta(
  z.object({
    now: z.iso.datetime(),
    matchedAutomationId: z.describe(z.nullable(z.string()), 'The automation that would apply: the first active one, by position, whose rule holds'),
    changes: z.describe(z.array(change), 'What its actions would change on the ticket (empty when nothing would change)'),
    automations: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        position: z.number().check(z.int()),
        isActive: z.boolean(),
        matched: z.describe(z.boolean(), 'The rule holds for the ticket (inactive automations are evaluated too, but never apply)'),
        conditions: z.array(
          z.object({
            group: z.enum(['all', 'any']),
            index: z.number().check(z.int()),
            field: z.string(),
            op: z.enum(CONDITION_OPS),
            value: z.unknown(),
            actual: z.describe(z.unknown(), "The ticket's value of the field (null when not set)"),
            held: z.boolean(),
          }),
        ),
      }),
    ),
  }),
  { id: 'AutomationDryRunResult' },
);
export type DryRunResult = z.infer<typeof DryRunResultSchema>;
