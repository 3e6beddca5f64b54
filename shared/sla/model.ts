import * as z from '../zod.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';
import { isTimeZone, WEEKDAYS } from './clock.ts';
import { plainText } from '../text.ts';
import { TIME_MODES, MAX_POLICIES, CONDITION_OPERATORS, OPERATORS, CUSTOM_FIELD_PREFIX } from './limits.ts';

export * from './limits.ts';

const scalar = z.union([z.string().check(z.maxLength(1000)), z.number(), z.boolean()]);
const ENUM_VALUES: Record<string, readonly string[]> = { priority: TICKET_PRIORITIES, type: TICKET_TYPES, status: TICKET_STATUSES };

export const ConditionSchema = z.meta(
  z
    .strictObject({
      field: z.meta(z.describe(z.string().check(z.minLength(1), z.maxLength(100)), 'priority, type, status, tags, assignee_id, requester_domain, or customField:<ticket field id>'), {
        anyOf: [{ enum: Object.keys(CONDITION_OPERATORS).filter((f) => f !== 'customField') }, { pattern: `^${CUSTOM_FIELD_PREFIX}\\S+$` }],
      }),
      operator: z.enum(OPERATORS),
      value: z.describe(
        z.optional(z.union([scalar, z.array(scalar).check(z.minLength(1), z.maxLength(100)), z.null()])),
        'A scalar for is/is_not, a non-empty array for contains_any, nothing for is_set/is_not_set',
      ),
    })
    .check(
      z.superRefine((c, ctx) => {
        const base = c.field.startsWith(CUSTOM_FIELD_PREFIX) && c.field.length > CUSTOM_FIELD_PREFIX.length ? 'customField' : c.field;
        const allowed = (CONDITION_OPERATORS as Record<string, readonly string[]>)[base];
        if (!allowed) return void ctx.addIssue({ code: 'custom', path: ['field'], message: `unknown field; use one of ${Object.keys(CONDITION_OPERATORS).join(', ')} (customField:<id>)` });
        if (!allowed.includes(c.operator)) return void ctx.addIssue({ code: 'custom', path: ['operator'], message: `${c.operator} does not apply to ${base}; use ${allowed.join(', ')}` });
        if ((c.operator === 'is' || c.operator === 'is_not') && (c.value === undefined || c.value === null || Array.isArray(c.value)))
          ctx.addIssue({ code: 'custom', path: ['value'], message: `${c.operator} needs a single value` });
        if (c.operator === 'contains_any' && !Array.isArray(c.value)) ctx.addIssue({ code: 'custom', path: ['value'], message: 'contains_any needs a non-empty array of values' });
        const allowedValues = ENUM_VALUES[base];
        if (allowedValues && c.value !== undefined && !allowedValues.includes(c.value as string))
          ctx.addIssue({ code: 'custom', path: ['value'], message: `must be one of ${allowedValues.join(', ')}` });
      }),
    ),
  { id: 'SlaCondition' },
);
export type SlaCondition = z.infer<typeof ConditionSchema>;

const minutes = z.number().check(z.int('must be an integer number of minutes'), z.gte(1, 'must be at least 1 minute'), z.lte(5_256_000, 'must be at most 10 years'));
const perPriority = z.strictObject({ urgent: minutes, high: minutes, normal: minutes, low: minutes });
export const TargetsSchema = z.meta(z.strictObject({ firstReply: perPriority, nextReply: perPriority, resolution: perPriority }), {
  id: 'SlaTargets',
  description: 'Minutes per metric and priority (integers, minimum 1)',
});
export type SlaTargets = z.infer<typeof TargetsSchema>;

export const SlaPolicySchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed sla_'),
    name: z.string(),
    description: z.nullable(z.string()),
    isActive: z.boolean(),
    timeMode: z.enum(TIME_MODES),
    conditions: z.array(ConditionSchema),
    targets: TargetsSchema,
    position: z.describe(z.number().check(z.int()), 'Evaluation order (lowest first)'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  }),
  { id: 'SlaPolicy' },
);
export type SlaPolicy = z.infer<typeof SlaPolicySchema>;

export const SlaPolicyBodySchema = z.meta(
  z.object({
    name: plainText(100),
    description: z.optional(z.nullable(z.string().check(z.maxLength(500)))),
    isActive: z.describe(z.optional(z.boolean()), 'true when omitted on create; left as it is when omitted on update'),
    timeMode: z.enum(TIME_MODES),
    conditions: z._default(z.array(ConditionSchema).check(z.maxLength(50)), []),
    targets: TargetsSchema,
  }),
  { id: 'SlaPolicyRequest', description: 'Create and update (PUT replaces the policy; position is kept on update, assigned at the end on create)' },
);
export type SlaPolicyInput = z.infer<typeof SlaPolicyBodySchema>;

export const ReorderBodySchema = z.meta(z.object({ orderedIds: z.array(z.string().check(z.minLength(1), z.maxLength(64))).check(z.maxLength(MAX_POLICIES)) }), { id: 'SlaReorderRequest' });

export const SlaTestBodySchema = z.meta(
  z.object({
    ticket: z.describe(
      z.object({
        priority: z._default(z.enum(TICKET_PRIORITIES), 'normal'),
        type: z._default(z.enum(TICKET_TYPES), 'question'),
        status: z._default(z.enum(TICKET_STATUSES), 'new'),
        tags: z._default(z.array(z.string().check(z.maxLength(64))).check(z.maxLength(100)), []),
        assigneeId: z._default(z.nullable(z.string().check(z.maxLength(64))), null),
        requesterEmail: z._default(z.nullable(z.string().check(z.maxLength(254))), null),
        customFields: z._default(z.array(z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)), value: z.unknown() })).check(z.maxLength(200)), []),
      }),
      'Other ticket attributes (a whole ticket may be pasted) are ignored',
    ),
  }),
  { id: 'SlaTestRequest' },
);
export type SlaSampleTicket = z.infer<typeof SlaTestBodySchema>['ticket'];

export const PerPriorityTargetsSchema = z.meta(z.object({ firstReply: z.number().check(z.int()), nextReply: z.number().check(z.int()), resolution: z.number().check(z.int()) }), {
  id: 'SlaPriorityTargets',
});
export const SlaTestResultSchema = z.meta(
  z.object({ matched: z.boolean(), policy: z.nullable(SlaPolicySchema), targets: z.describe(z.nullable(PerPriorityTargetsSchema), "Minutes for the sample ticket's priority") }),
  { id: 'SlaTestResult' },
);

export const SlaMetricStateSchema = z.meta(
  z.object({
    targetMinutes: z.number().check(z.int()),
    startedAt: z.iso.datetime(),
    dueAt: z.describe(z.nullable(z.iso.datetime()), 'Null while the clock is paused (ticket pending)'),
    achievedAt: z.nullable(z.iso.datetime()),
    breached: z.boolean(),
    pausedMinutes: z.describe(z.number().check(z.int()), 'Clock minutes spent paused within this metric'),
  }),
  { id: 'SlaMetricState' },
);
export type SlaMetricState = z.infer<typeof SlaMetricStateSchema>;

export const SlaStateSchema = z.meta(
  z.object({
    ticketId: z.string(),
    policyId: z.nullable(z.string()),
    policyName: z.nullable(z.string()),
    timeMode: z.nullable(z.enum(TIME_MODES)),
    metrics: z.object({ firstReply: z.nullable(SlaMetricStateSchema), nextReply: z.nullable(SlaMetricStateSchema), resolution: z.nullable(SlaMetricStateSchema) }),
    breached: z.describe(z.boolean(), 'Any metric breached'),
    paused: z.describe(z.boolean(), 'The ticket is pending: the clock stands still'),
    updatedAt: z.iso.datetime(),
  }),
  { id: 'SlaState' },
);
export type SlaState = z.infer<typeof SlaStateSchema>;

export const RecomputeResultSchema = z.meta(z.object({ accepted: z.literal(true), ticketCount: z.describe(z.number().check(z.int()), 'Open tickets (new, open, pending) queued for recompute') }), {
  id: 'SlaRecomputeResult',
});

const hhmm = z.string().check(z.regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/, 'must be HH:MM (00:00..24:00)'));
const dayIntervals = z.array(z.strictObject({ start: hhmm, end: hhmm })).check(
  z.maxLength(8),
  z.superRefine((list, ctx) => {
    for (let i = 0; i < list.length; i++) {
      if (list[i].end <= list[i].start) ctx.addIssue({ code: 'custom', path: [i], message: 'end must be after start' });
      if (i > 0 && list[i].start < list[i - 1].end) ctx.addIssue({ code: 'custom', path: [i], message: 'intervals must be in order and not overlap' });
    }
  }),
);
const isoDay = z.string().check(
  z.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be YYYY-MM-DD'),
  z.refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), 'not a calendar date'),
);

export const BusinessScheduleSchema = z.meta(
  z
    .strictObject({
      timeZone: z.string().check(z.minLength(1), z.maxLength(64), z.refine(isTimeZone, 'unknown IANA time zone')),
      days: z.strictObject({
        sun: z._default(dayIntervals, []),
        mon: z._default(dayIntervals, []),
        tue: z._default(dayIntervals, []),
        wed: z._default(dayIntervals, []),
        thu: z._default(dayIntervals, []),
        fri: z._default(dayIntervals, []),
        sat: z._default(dayIntervals, []),
      }),
      holidays: z._default(z.array(isoDay).check(z.maxLength(366)), []),
    })
    .check(z.refine((s) => WEEKDAYS.some((d) => (s.days[d] ?? []).length > 0), { message: 'at least one weekday needs a working interval', path: ['days'] })),
  { id: 'SlaBusinessSchedule', description: 'Local working intervals per weekday (sun..sat) in an IANA time zone, and holidays (local dates)' },
);

export const ScheduleBodySchema = z.meta(z.object({ schedule: z.nullable(BusinessScheduleSchema) }), { id: 'SlaScheduleRequest', description: 'null restores the default (Mon-Fri 09:00-17:00 UTC)' });
export const ScheduleResponseSchema = z.meta(z.object({ schedule: BusinessScheduleSchema, isDefault: z.boolean() }), { id: 'SlaSchedule' });

export const PolicyParamsSchema = z.object({ policyId: z.string().check(z.minLength(1), z.maxLength(64)) });
export const TicketParamsSchema = z.object({ ticketId: z.string().check(z.minLength(1), z.maxLength(64)) });
