import * as z from 'zod';
import { plainText } from '../text.ts';

import { FIELD_TYPES, OPTION_VALUE_MAX } from './limits.ts';

export { FIELD_TYPES, MAX_OPTIONS_PER_FIELD, OPTION_TYPES, OPTION_VALUE_MAX, type FieldType } from './limits.ts';

export const OptionSchema = z.object({ id: z.string().describe('Prefixed opt_'), name: z.string(), value: z.string(), default: z.boolean() }).meta({ id: 'CustomFieldOption' });
export type OptionDto = z.infer<typeof OptionSchema>;

export const TicketFieldSchema = z
  .object({
    id: z.string().describe('System fields use the prefix system_; custom fields fld_'),
    title: z.string(),
    fieldKey: z.string(),
    type: z.enum(FIELD_TYPES),
    description: z.string().nullable(),
    position: z.number().int(),
    active: z.boolean(),
    requiredForAgents: z.boolean(),
    requiredForEndUsers: z.boolean(),
    visibleToEndUsers: z.boolean(),
    editableByEndUsers: z.boolean(),
    regexPattern: z.string().nullable(),
    defaultValue: z.string().nullable(),
    options: z.array(OptionSchema).nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'TicketField' });
export type TicketFieldDto = z.infer<typeof TicketFieldSchema>;

const optionName = plainText(128);
const optionValue = z
  .string()
  .trim()
  .min(1)
  .max(OPTION_VALUE_MAX)
  .regex(/^[^\s]+$/, 'must not contain spaces');
export const OptionInputSchema = z.object({ name: optionName, value: optionValue, default: z.boolean().default(false) });

/** A regex pattern stays modest in size; that it compiles as RE2 (decisions §6) is checked by the service, which loads RE2 for it. */
const regexPattern = z.string().min(1).max(500);

const fieldBase = {
  title: plainText(255),
  description: z.string().max(2000).nullable().optional(),
  position: z.number().int().min(0).max(1_000_000).optional(),
  active: z.boolean().optional(),
  requiredForAgents: z.boolean().optional(),
  requiredForEndUsers: z.boolean().optional(),
  visibleToEndUsers: z.boolean().optional(),
  editableByEndUsers: z.boolean().optional(),
  regexPattern: regexPattern.nullable().optional(),
  defaultValue: z.string().max(1000).nullable().optional(),
};

export const CreateTicketFieldBodySchema = z
  .object({
    ticketField: z.object({
      ...fieldBase,
      type: z.enum(FIELD_TYPES),
      fieldKey: z
        .string()
        .regex(/^[a-zA-Z][a-zA-Z0-9_]{0,63}$/, 'must start with a letter and contain only letters, digits and underscores (max 64)')
        .optional(),
      options: z.array(OptionInputSchema).optional(),
    }),
  })
  .meta({ id: 'CreateTicketFieldRequest' });
export type CreateTicketFieldInput = z.infer<typeof CreateTicketFieldBodySchema>['ticketField'];

export const UpdateTicketFieldBodySchema = z
  .object({
    ticketField: z.object({
      ...fieldBase,
      title: fieldBase.title.optional(),
      // Present so a change can be refused as IMMUTABLE_FIELD rather than silently ignored.
      type: z.string().optional(),
      fieldKey: z.string().optional(),
    }),
  })
  .meta({ id: 'UpdateTicketFieldRequest' });
export type UpdateTicketFieldInput = z.infer<typeof UpdateTicketFieldBodySchema>['ticketField'];

export const CreateOptionBodySchema = z.object({ customFieldOption: OptionInputSchema }).meta({ id: 'CreateCustomFieldOptionRequest' });
export const UpdateOptionBodySchema = z
  .object({ customFieldOption: z.object({ name: optionName.optional(), value: optionValue.optional(), default: z.boolean().optional() }) })
  .meta({ id: 'UpdateCustomFieldOptionRequest' });
export type UpdateOptionInput = z.infer<typeof UpdateOptionBodySchema>['customFieldOption'];

const booleanParam = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true');

export const ListTicketFieldsQuerySchema = z.object({
  active: booleanParam.optional(),
  page_size: z.coerce.number().int().min(1).max(100).default(25),
  after: z.string().min(1).max(4096).optional(),
  sort_by: z.enum(['position', 'title', 'created_at']).default('position'),
  sort_order: z.enum(['asc', 'desc']).default('asc'),
});
export type ListTicketFieldsQuery = z.infer<typeof ListTicketFieldsQuerySchema>;

const id = z.string().min(1).max(64);
export const FieldIdParamsSchema = z.object({ id });
// API Gateway allows one variable name per path level, so the field is `{id}` under /ticket_fields in every route.
export const FieldOptionsParamsSchema = z.object({ id });
export const OptionParamsSchema = z.object({ id, optionId: id });
