import * as z from 'zod';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';
import { isTimeZone, WEEKDAYS } from './clock.ts';
import { plainText } from '../text.ts';
import { TIME_MODES, MAX_POLICIES, CONDITION_OPERATORS, OPERATORS, CUSTOM_FIELD_PREFIX } from './limits.ts';

export * from './limits.ts';

const scalar = z.union([z.string().max(1000), z.number(), z.boolean()]);
const ENUM_VALUES: Record<string, readonly string[]> = { priority: TICKET_PRIORITIES, type: TICKET_TYPES, status: TICKET_STATUSES };

export const ConditionSchema = z
  .object({
    field: z
      .string()
      .min(1)
      .max(100)
      .describe('priority, type, status, tags, assignee_id, requester_domain, or customField:<ticket field id>')
      // The rule as JSON Schema for the OpenAPI document; the refinement below gives the message.
      .meta({ anyOf: [{ enum: Object.keys(CONDITION_OPERATORS).filter((f) => f !== 'customField') }, { pattern: `^${CUSTOM_FIELD_PREFIX}\\S+$` }] }),
    operator: z.enum(OPERATORS),
    value: z
      .union([scalar, z.array(scalar).min(1).max(100), z.null()])
      .optional()
      .describe('A scalar for is/is_not, a non-empty array for contains_any, nothing for is_set/is_not_set'),
  })
  .strict()
  .superRefine((c, ctx) => {
    const base = c.field.startsWith(CUSTOM_FIELD_PREFIX) && c.field.length > CUSTOM_FIELD_PREFIX.length ? 'customField' : c.field;
    const allowed = (CONDITION_OPERATORS as Record<string, readonly string[]>)[base];
    if (!allowed) return void ctx.addIssue({ code: 'custom', path: ['field'], message: `unknown field; use one of ${Object.keys(CONDITION_OPERATORS).join(', ')} (customField:<id>)` });
    if (!allowed.includes(c.operator)) return void ctx.addIssue({ code: 'custom', path: ['operator'], message: `${c.operator} does not apply to ${base}; use ${allowed.join(', ')}` });
    if ((c.operator === 'is' || c.operator === 'is_not') && (c.value === undefined || c.value === null || Array.isArray(c.value)))
      ctx.addIssue({ code: 'custom', path: ['value'], message: `${c.operator} needs a single value` });
    if (c.operator === 'contains_any' && !Array.isArray(c.value)) ctx.addIssue({ code: 'custom', path: ['value'], message: 'contains_any needs a non-empty array of values' });
    const allowedValues = ENUM_VALUES[base];
    if (allowedValues && c.value !== undefined && !allowedValues.includes(c.value as string)) ctx.addIssue({ code: 'custom', path: ['value'], message: `must be one of ${allowedValues.join(', ')}` });
  })
  .meta({ id: 'SlaCondition' });
export type SlaCondition = z.infer<typeof ConditionSchema>;

const minutes = z.number().int('must be an integer number of minutes').min(1, 'must be at least 1 minute').max(5_256_000, 'must be at most 10 years');
const perPriority = z.object({ urgent: minutes, high: minutes, normal: minutes, low: minutes }).strict();
export const TargetsSchema = z
  .object({ firstReply: perPriority, nextReply: perPriority, resolution: perPriority })
  .strict()
  .meta({ id: 'SlaTargets', description: 'Minutes per metric and priority (integers, minimum 1)' });
export type SlaTargets = z.infer<typeof TargetsSchema>;

export const SlaPolicySchema = z
  .object({
    id: z.string().describe('Prefixed sla_'),
    name: z.string(),
    description: z.string().nullable(),
    isActive: z.boolean(),
    timeMode: z.enum(TIME_MODES),
    conditions: z.array(ConditionSchema),
    targets: TargetsSchema,
    position: z.number().int().describe('Evaluation order (lowest first)'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'SlaPolicy' });
export type SlaPolicy = z.infer<typeof SlaPolicySchema>;

export const SlaPolicyBodySchema = z
  .object({
    name: plainText(100),
    description: z.string().max(500).nullable().optional(),
    isActive: z.boolean().optional().describe('true when omitted on create; left as it is when omitted on update'),
    timeMode: z.enum(TIME_MODES),
    conditions: z.array(ConditionSchema).max(50).default([]),
    targets: TargetsSchema,
  })
  .meta({ id: 'SlaPolicyRequest', description: 'Create and update (PUT replaces the policy; position is kept on update, assigned at the end on create)' });
export type SlaPolicyInput = z.infer<typeof SlaPolicyBodySchema>;

export const ReorderBodySchema = z.object({ orderedIds: z.array(z.string().min(1).max(64)).max(MAX_POLICIES) }).meta({ id: 'SlaReorderRequest' });

export const SlaTestBodySchema = z
  .object({
    ticket: z
      .object({
        priority: z.enum(TICKET_PRIORITIES).default('normal'),
        type: z.enum(TICKET_TYPES).default('question'),
        status: z.enum(TICKET_STATUSES).default('new'),
        tags: z.array(z.string().max(64)).max(100).default([]),
        assigneeId: z.string().max(64).nullable().default(null),
        requesterEmail: z.string().max(254).nullable().default(null),
        customFields: z
          .array(z.object({ id: z.string().min(1).max(64), value: z.unknown() }))
          .max(200)
          .default([]),
      })
      .describe('Other ticket attributes (a whole ticket may be pasted) are ignored'),
  })
  .meta({ id: 'SlaTestRequest' });
export type SlaSampleTicket = z.infer<typeof SlaTestBodySchema>['ticket'];

export const PerPriorityTargetsSchema = z.object({ firstReply: z.number().int(), nextReply: z.number().int(), resolution: z.number().int() }).meta({ id: 'SlaPriorityTargets' });
export const SlaTestResultSchema = z
  .object({ matched: z.boolean(), policy: SlaPolicySchema.nullable(), targets: PerPriorityTargetsSchema.nullable().describe("Minutes for the sample ticket's priority") })
  .meta({ id: 'SlaTestResult' });

export const SlaMetricStateSchema = z
  .object({
    targetMinutes: z.number().int(),
    startedAt: z.iso.datetime(),
    dueAt: z.iso.datetime().nullable().describe('Null while the clock is paused (ticket pending)'),
    achievedAt: z.iso.datetime().nullable(),
    breached: z.boolean(),
    pausedMinutes: z.number().int().describe('Clock minutes spent paused within this metric'),
  })
  .meta({ id: 'SlaMetricState' });
export type SlaMetricState = z.infer<typeof SlaMetricStateSchema>;

export const SlaStateSchema = z
  .object({
    ticketId: z.string(),
    policyId: z.string().nullable(),
    policyName: z.string().nullable(),
    timeMode: z.enum(TIME_MODES).nullable(),
    metrics: z.object({ firstReply: SlaMetricStateSchema.nullable(), nextReply: SlaMetricStateSchema.nullable(), resolution: SlaMetricStateSchema.nullable() }),
    breached: z.boolean().describe('Any metric breached'),
    paused: z.boolean().describe('The ticket is pending: the clock stands still'),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'SlaState' });
export type SlaState = z.infer<typeof SlaStateSchema>;

export const RecomputeResultSchema = z
  .object({ accepted: z.literal(true), ticketCount: z.number().int().describe('Open tickets (new, open, pending) queued for recompute') })
  .meta({ id: 'SlaRecomputeResult' });

const hhmm = z.string().regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/, 'must be HH:MM (00:00..24:00)');
const dayIntervals = z
  .array(z.object({ start: hhmm, end: hhmm }).strict())
  .max(8)
  .superRefine((list, ctx) => {
    for (let i = 0; i < list.length; i++) {
      if (list[i].end <= list[i].start) ctx.addIssue({ code: 'custom', path: [i], message: 'end must be after start' });
      if (i > 0 && list[i].start < list[i - 1].end) ctx.addIssue({ code: 'custom', path: [i], message: 'intervals must be in order and not overlap' });
    }
  });
const isoDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be YYYY-MM-DD')
  .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), 'not a calendar date');

export const BusinessScheduleSchema = z
  .object({
    timeZone: z.string().min(1).max(64).refine(isTimeZone, 'unknown IANA time zone'),
    days: z
      .object({
        sun: dayIntervals.default([]),
        mon: dayIntervals.default([]),
        tue: dayIntervals.default([]),
        wed: dayIntervals.default([]),
        thu: dayIntervals.default([]),
        fri: dayIntervals.default([]),
        sat: dayIntervals.default([]),
      })
      .strict(),
    holidays: z.array(isoDay).max(366).default([]),
  })
  .strict()
  .refine((s) => WEEKDAYS.some((d) => (s.days[d] ?? []).length > 0), { message: 'at least one weekday needs a working interval', path: ['days'] })
  .meta({ id: 'SlaBusinessSchedule', description: 'Local working intervals per weekday (sun..sat) in an IANA time zone, and holidays (local dates)' });

export const ScheduleBodySchema = z.object({ schedule: BusinessScheduleSchema.nullable() }).meta({ id: 'SlaScheduleRequest', description: 'null restores the default (Mon-Fri 09:00-17:00 UTC)' });
export const ScheduleResponseSchema = z.object({ schedule: BusinessScheduleSchema, isDefault: z.boolean() }).meta({ id: 'SlaSchedule' });

export const PolicyParamsSchema = z.object({ policyId: z.string().min(1).max(64) });
export const TicketParamsSchema = z.object({ ticketId: z.string().min(1).max(64) });
