import * as z from '../zod.ts';
import { plainText } from '../text.ts';
import { TicketSchema } from '../tickets/resource.ts';
import { CONDITION_FIELDS, CONDITION_OPERATORS } from './limits.ts';

export * from './limits.ts';

export const ConditionSchema = z.meta(
  z.object({
    field: z.string().check(
      z.maxLength(80),
      z.refine((f) => (CONDITION_FIELDS as readonly string[]).includes(f) || /^customFields\.[^\s]{1,64}$/u.test(f), `one of ${CONDITION_FIELDS.join(', ')} or customFields.<fieldKey>`),
    ),
    operator: z.enum(CONDITION_OPERATORS),
    value: z.describe(z.unknown(), 'As the field and operator need: a value, an array (in/notIn), a tag (includes/excludes), a number or date (lessThan/greaterThan)'),
  }),
  { id: 'ViewCondition' },
);
export type Condition = z.infer<typeof ConditionSchema>;

/** A condition as stored: a custom field's condition also names the field's id (tickets hold values by id). */
export interface StoredCondition extends Condition {
  fieldId?: string;
}

const conditionList = z.array(ConditionSchema).check(z.maxLength(50));
export const ConditionsSchema = z.meta(z.object({ all: z._default(conditionList, []), any: z._default(conditionList, []) }), { id: 'ViewConditions' });

export const VIEW_SORT_FIELDS = ['createdAt', 'updatedAt', 'priority', 'status'] as const;
export const ViewSortSchema = z.meta(z.object({ by: z.enum(VIEW_SORT_FIELDS), order: z.enum(['asc', 'desc']) }), { id: 'ViewSort' });
export type ViewSort = z.infer<typeof ViewSortSchema>;
export const DEFAULT_SORT: ViewSort = { by: 'updatedAt', order: 'desc' };

export const ViewSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed view_'),
    title: z.string(),
    conditions: z.object({ all: z.array(ConditionSchema), any: z.array(ConditionSchema) }),
    sort: ViewSortSchema,
    personal: z.boolean(),
    ownerId: z.describe(z.nullable(z.string()), 'The user a personal view belongs to; null for a shared view'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  }),
  { id: 'View' },
);
export type View = z.infer<typeof ViewSchema>;

const viewInput = { title: plainText(100), conditions: ConditionsSchema, sort: ViewSortSchema };

export const CreateViewBodySchema = z.meta(z.object({ view: z.object({ ...viewInput, sort: z._default(viewInput.sort, DEFAULT_SORT), personal: z._default(z.boolean(), false) }) }), {
  id: 'CreateViewRequest',
});
export type CreateViewInput = z.infer<typeof CreateViewBodySchema>['view'];

export const UpdateViewBodySchema = z.meta(z.object({ view: z.partial(z.object({ ...viewInput, personal: z.boolean() })) }), {
  id: 'UpdateViewRequest',
  description: 'Only the given fields change; conditions are replaced whole. `personal` cannot change (422).',
});
export type UpdateViewInput = z.infer<typeof UpdateViewBodySchema>['view'];

export const ViewIdParamsSchema = z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)) });

export const ViewCountSchema = z.meta(
  z.object({
    viewId: z.string(),
    value: z.describe(z.number().check(z.int()), 'Tickets matching the view'),
    fresh: z.describe(z.boolean(), "false while the account's latest ticket changes (or the view's first count) are still being applied: then the last exact value"),
  }),
  { id: 'ViewCount' },
);
export type ViewCount = z.infer<typeof ViewCountSchema>;

export const ViewCountsQuerySchema = z.object({
  ids: z.describe(
    z.pipe(
      z.pipe(
        z.string().check(z.minLength(1), z.maxLength(20 * 65)),
        z.transform((s) => [...new Set(s.split(','))]),
      ),
      z.array(z.string().check(z.minLength(1), z.maxLength(64))).check(z.minLength(1), z.maxLength(20)),
    ),
    'Up to 20 view ids, comma-separated',
  ),
});

export const ViewTicketsQuerySchema = z.object({
  page_size: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 25),
  after: z.optional(z.string().check(z.minLength(1), z.maxLength(4096))),
});
export type ViewTicketsQuery = z.infer<typeof ViewTicketsQuerySchema>;

export { TicketSchema };
