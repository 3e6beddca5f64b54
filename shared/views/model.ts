import * as z from 'zod';
import { plainText } from '../text.ts';
import { TicketSchema } from '../tickets/resource.ts';
import { CONDITION_FIELDS, CONDITION_OPERATORS } from './limits.ts';

export * from './limits.ts';

export const ConditionSchema = z
  .object({
    field: z
      .string()
      .max(80)
      .refine((f) => (CONDITION_FIELDS as readonly string[]).includes(f) || /^customFields\.[^\s]{1,64}$/u.test(f), `one of ${CONDITION_FIELDS.join(', ')} or customFields.<fieldKey>`),
    operator: z.enum(CONDITION_OPERATORS),
    value: z.unknown().describe('As the field and operator need: a value, an array (in/notIn), a tag (includes/excludes), a number or date (lessThan/greaterThan)'),
  })
  .meta({ id: 'ViewCondition' });
export type Condition = z.infer<typeof ConditionSchema>;

/** A condition as stored: a custom field's condition also names the field's id (tickets hold values by id). */
export interface StoredCondition extends Condition {
  fieldId?: string;
}

const conditionList = z.array(ConditionSchema).max(50);
export const ConditionsSchema = z.object({ all: conditionList.default([]), any: conditionList.default([]) }).meta({ id: 'ViewConditions' });

export const VIEW_SORT_FIELDS = ['createdAt', 'updatedAt', 'priority', 'status'] as const;
export const ViewSortSchema = z.object({ by: z.enum(VIEW_SORT_FIELDS), order: z.enum(['asc', 'desc']) }).meta({ id: 'ViewSort' });
export type ViewSort = z.infer<typeof ViewSortSchema>;
export const DEFAULT_SORT: ViewSort = { by: 'updatedAt', order: 'desc' };

export const ViewSchema = z
  .object({
    id: z.string().describe('Prefixed view_'),
    title: z.string(),
    conditions: z.object({ all: z.array(ConditionSchema), any: z.array(ConditionSchema) }),
    sort: ViewSortSchema,
    personal: z.boolean(),
    ownerId: z.string().nullable().describe('The user a personal view belongs to; null for a shared view'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'View' });
export type View = z.infer<typeof ViewSchema>;

const viewInput = { title: plainText(100), conditions: ConditionsSchema, sort: ViewSortSchema };

export const CreateViewBodySchema = z.object({ view: z.object({ ...viewInput, sort: viewInput.sort.default(DEFAULT_SORT), personal: z.boolean().default(false) }) }).meta({ id: 'CreateViewRequest' });
export type CreateViewInput = z.infer<typeof CreateViewBodySchema>['view'];

export const UpdateViewBodySchema = z
  .object({ view: z.object({ ...viewInput, personal: z.boolean() }).partial() })
  .meta({ id: 'UpdateViewRequest', description: 'Only the given fields change; conditions are replaced whole. `personal` cannot change (422).' });
export type UpdateViewInput = z.infer<typeof UpdateViewBodySchema>['view'];

export const ViewIdParamsSchema = z.object({ id: z.string().min(1).max(64) });

export const ViewCountSchema = z
  .object({
    viewId: z.string(),
    value: z.number().int().describe('Tickets matching the view'),
    fresh: z.boolean().describe("false while the account's latest ticket changes (or the view's first count) are still being applied: then the last exact value"),
  })
  .meta({ id: 'ViewCount' });
export type ViewCount = z.infer<typeof ViewCountSchema>;

export const ViewCountsQuerySchema = z.object({
  ids: z
    .string()
    .min(1)
    .max(20 * 65)
    .transform((s) => [...new Set(s.split(','))])
    .pipe(z.array(z.string().min(1).max(64)).min(1).max(20))
    .describe('Up to 20 view ids, comma-separated'),
});

export const ViewTicketsQuerySchema = z.object({
  page_size: z.coerce.number().int().min(1).max(100).default(25),
  after: z.string().min(1).max(4096).optional(),
});
export type ViewTicketsQuery = z.infer<typeof ViewTicketsQuerySchema>;

export { TicketSchema };
