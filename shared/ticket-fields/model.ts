import * as z from '../zod.ts';
import { plainText } from '../text.ts';

import { FIELD_TYPES, OPTION_VALUE_MAX } from './limits.ts';

export { FIELD_TYPES, MAX_OPTIONS_PER_FIELD, OPTION_TYPES, OPTION_VALUE_MAX, type FieldType } from './limits.ts';

export const OptionSchema = z.meta(z.object({ id: z.describe(z.string(), 'Prefixed opt_'), name: z.string(), value: z.string(), default: z.boolean() }), { id: 'CustomFieldOption' });
export type OptionDto = z.infer<typeof OptionSchema>;

export const TicketFieldSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'System fields use the prefix system_; custom fields fld_'),
    title: z.string(),
    fieldKey: z.string(),
    type: z.enum(FIELD_TYPES),
    description: z.nullable(z.string()),
    position: z.number().check(z.int()),
    active: z.boolean(),
    requiredForAgents: z.boolean(),
    requiredForEndUsers: z.boolean(),
    visibleToEndUsers: z.boolean(),
    editableByEndUsers: z.boolean(),
    regexPattern: z.nullable(z.string()),
    defaultValue: z.nullable(z.string()),
    options: z.nullable(z.array(OptionSchema)),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  }),
  { id: 'TicketField' },
);
export type TicketFieldDto = z.infer<typeof TicketFieldSchema>;

const optionName = plainText(128);
const optionValue = z.string().check(z.trim(), z.minLength(1), z.maxLength(OPTION_VALUE_MAX), z.regex(/^[^\s]+$/, 'must not contain spaces'));
export const OptionInputSchema = z.object({ name: optionName, value: optionValue, default: z._default(z.boolean(), false) });

/** A regex pattern stays modest in size; that it compiles as RE2 (decisions §6) is checked by the service, which loads RE2 for it. */
const regexPattern = z.string().check(z.minLength(1), z.maxLength(500));

const fieldBase = {
  title: plainText(255),
  description: z.optional(z.nullable(z.string().check(z.maxLength(2000)))),
  position: z.optional(z.number().check(z.int(), z.gte(0), z.lte(1_000_000))),
  active: z.optional(z.boolean()),
  requiredForAgents: z.optional(z.boolean()),
  requiredForEndUsers: z.optional(z.boolean()),
  visibleToEndUsers: z.optional(z.boolean()),
  editableByEndUsers: z.optional(z.boolean()),
  regexPattern: z.optional(z.nullable(regexPattern)),
  defaultValue: z.optional(z.nullable(z.string().check(z.maxLength(1000)))),
};

export const CreateTicketFieldBodySchema = z.meta(
  z.object({
    ticketField: z.object({
      ...fieldBase,
      type: z.enum(FIELD_TYPES),
      fieldKey: z.optional(z.string().check(z.regex(/^[a-zA-Z][a-zA-Z0-9_]{0,63}$/, 'must start with a letter and contain only letters, digits and underscores (max 64)'))),
      options: z.optional(z.array(OptionInputSchema)),
    }),
  }),
  { id: 'CreateTicketFieldRequest' },
);
export type CreateTicketFieldInput = z.infer<typeof CreateTicketFieldBodySchema>['ticketField'];

export const UpdateTicketFieldBodySchema = z.meta(
  z.object({
    ticketField: z.object({
      ...fieldBase,
      title: z.optional(fieldBase.title),
      // Present so a change can be refused as IMMUTABLE_FIELD rather than silently ignored.
      type: z.optional(z.string()),
      fieldKey: z.optional(z.string()),
    }),
  }),
  { id: 'UpdateTicketFieldRequest' },
);
export type UpdateTicketFieldInput = z.infer<typeof UpdateTicketFieldBodySchema>['ticketField'];

export const CreateOptionBodySchema = z.meta(z.object({ customFieldOption: OptionInputSchema }), { id: 'CreateCustomFieldOptionRequest' });
export const UpdateOptionBodySchema = z.meta(z.object({ customFieldOption: z.object({ name: z.optional(optionName), value: z.optional(optionValue), default: z.optional(z.boolean()) }) }), {
  id: 'UpdateCustomFieldOptionRequest',
});
export type UpdateOptionInput = z.infer<typeof UpdateOptionBodySchema>['customFieldOption'];

const booleanParam = z.pipe(
  z.enum(['true', 'false'], { error: 'must be true or false' }),
  z.transform((v) => v === 'true'),
);

export const ListTicketFieldsQuerySchema = z.object({
  active: z.optional(booleanParam),
  page_size: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 25),
  after: z.optional(z.string().check(z.minLength(1), z.maxLength(4096))),
  sort_by: z._default(z.enum(['position', 'title', 'created_at']), 'position'),
  sort_order: z._default(z.enum(['asc', 'desc']), 'asc'),
});
export type ListTicketFieldsQuery = z.infer<typeof ListTicketFieldsQuerySchema>;

const id = z.string().check(z.minLength(1), z.maxLength(64));
export const FieldIdParamsSchema = z.object({ id });
// API Gateway allows one variable name per path level, so the field is `{id}` under /ticket_fields in every route.
export const FieldOptionsParamsSchema = z.object({ id });
export const OptionParamsSchema = z.object({ id, optionId: id });
