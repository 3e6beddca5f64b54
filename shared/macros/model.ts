import * as z from '../zod.ts';
import { plainText } from '../text.ts';
import { TicketSchema } from '../tickets/resource.ts';
import { ACTION_FIELDS } from './limits.ts';

export * from './limits.ts';

export const MacroActionSchema = z.meta(
  z.object({
    field: z.string().check(
      z.maxLength(80),
      z.refine((f) => (ACTION_FIELDS as readonly string[]).includes(f) || /^customFields\.[^\s]{1,64}$/u.test(f), `one of ${ACTION_FIELDS.join(', ')} or customFields.<fieldKey>`),
    ),
    value: z.describe(z.unknown(), 'What a ticket update takes for the field; for comment {type: "response" | "note", content}'),
  }),
  { id: 'MacroAction' },
);
export type MacroAction = z.infer<typeof MacroActionSchema>;

const actions = z.array(MacroActionSchema).check(
  z.minLength(1),
  z.maxLength(50),
  z.superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((a, i) => {
      if (seen.has(a.field)) ctx.addIssue({ code: 'custom', path: [i, 'field'], message: `${a.field} appears more than once` });
      seen.add(a.field);
    });
  }),
);

export const MacroSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed mac_'),
    title: z.string(),
    actions: z.array(MacroActionSchema),
    personal: z.boolean(),
    ownerId: z.describe(z.nullable(z.string()), 'The user a personal macro belongs to; null for a shared macro'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  }),
  { id: 'Macro' },
);
export type Macro = z.infer<typeof MacroSchema>;

export const CreateMacroBodySchema = z.meta(z.object({ macro: z.object({ title: plainText(100), actions, personal: z._default(z.boolean(), false) }) }), { id: 'CreateMacroRequest' });
export type CreateMacroInput = z.infer<typeof CreateMacroBodySchema>['macro'];

export const UpdateMacroBodySchema = z.meta(z.object({ macro: z.partial(z.object({ title: plainText(100), actions, personal: z.boolean() })) }), {
  id: 'UpdateMacroRequest',
  description: 'Only the given fields change; actions are replaced whole. `personal` cannot change (422).',
});
export type UpdateMacroInput = z.infer<typeof UpdateMacroBodySchema>['macro'];

export const MacroIdParamsSchema = z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)) });
export const ApplyMacroParamsSchema = z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)), macroId: z.string().check(z.minLength(1), z.maxLength(64)) });

export const MacroCommentSchema = z.meta(z.object({ type: z.enum(['response', 'note']), content: z.string() }), { id: 'MacroComment' });
export type MacroComment = z.infer<typeof MacroCommentSchema>;

export const MacroPreviewSchema = z.meta(
  z.object({ result: z.object({ ticket: TicketSchema, comment: z.describe(z.nullable(MacroCommentSchema), 'The comment as it would be added, placeholders rendered; null without one') }) }),
  { id: 'MacroPreview' },
);
