import * as z from 'zod';
import { plainText } from '../text.ts';
import { TicketSchema } from '../tickets/resource.ts';
import { ACTION_FIELDS } from './limits.ts';

export * from './limits.ts';

export const MacroActionSchema = z
  .object({
    field: z
      .string()
      .max(80)
      .refine((f) => (ACTION_FIELDS as readonly string[]).includes(f) || /^customFields\.[^\s]{1,64}$/u.test(f), `one of ${ACTION_FIELDS.join(', ')} or customFields.<fieldKey>`),
    value: z.unknown().describe('What a ticket update takes for the field; for comment {type: "response" | "note", content}'),
  })
  .meta({ id: 'MacroAction' });
export type MacroAction = z.infer<typeof MacroActionSchema>;

const actions = z
  .array(MacroActionSchema)
  .min(1)
  .max(50)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((a, i) => {
      if (seen.has(a.field)) ctx.addIssue({ code: 'custom', path: [i, 'field'], message: `${a.field} appears more than once` });
      seen.add(a.field);
    });
  });

export const MacroSchema = z
  .object({
    id: z.string().describe('Prefixed mac_'),
    title: z.string(),
    actions: z.array(MacroActionSchema),
    personal: z.boolean(),
    ownerId: z.string().nullable().describe('The user a personal macro belongs to; null for a shared macro'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Macro' });
export type Macro = z.infer<typeof MacroSchema>;

export const CreateMacroBodySchema = z.object({ macro: z.object({ title: plainText(100), actions, personal: z.boolean().default(false) }) }).meta({ id: 'CreateMacroRequest' });
export type CreateMacroInput = z.infer<typeof CreateMacroBodySchema>['macro'];

export const UpdateMacroBodySchema = z
  .object({ macro: z.object({ title: plainText(100), actions, personal: z.boolean() }).partial() })
  .meta({ id: 'UpdateMacroRequest', description: 'Only the given fields change; actions are replaced whole. `personal` cannot change (422).' });
export type UpdateMacroInput = z.infer<typeof UpdateMacroBodySchema>['macro'];

export const MacroIdParamsSchema = z.object({ id: z.string().min(1).max(64) });
export const ApplyMacroParamsSchema = z.object({ id: z.string().min(1).max(64), macroId: z.string().min(1).max(64) });

export const MacroCommentSchema = z.object({ type: z.enum(['response', 'note']), content: z.string() }).meta({ id: 'MacroComment' });
export type MacroComment = z.infer<typeof MacroCommentSchema>;

export const MacroPreviewSchema = z
  .object({ result: z.object({ ticket: TicketSchema, comment: MacroCommentSchema.nullable().describe('The comment as it would be added, placeholders rendered; null without one') }) })
  .meta({ id: 'MacroPreview' });
