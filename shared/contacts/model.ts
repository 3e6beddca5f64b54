import * as z from '../zod.ts';
import { searchParam } from '../search/words.ts';
import { plainText } from '../text.ts';
import { pageParams } from '../pagination/numbered.ts';
import { CONTACT_EMAIL_MAX } from './limits.ts';

export * from './resource.ts';

export * from './limits.ts';

const name = plainText(128);
const email = z.email({ error: 'must be a valid email address' }).check(z.maxLength(CONTACT_EMAIL_MAX));
const notes = z.nullable(z.string().check(z.maxLength(10_000)));
const organizationId = z.nullable(z.string().check(z.minLength(1), z.maxLength(64)));

export const CreateContactBodySchema = z.meta(z.object({ name, email, organizationId: z.optional(organizationId), notes: z.optional(notes) }), {
  id: 'CreateContactRequest',
  description: "Without organizationId, a contact whose email domain is an organization's domain is linked to it (free-mail domains excepted).",
});
export type CreateContactInput = z.infer<typeof CreateContactBodySchema>;

export const UpdateContactBodySchema = z.meta(z.object({ name: z.optional(name), email: z.optional(email), organizationId: z.optional(organizationId), notes: z.optional(notes) }), {
  id: 'UpdateContactRequest',
});
export type UpdateContactInput = z.infer<typeof UpdateContactBodySchema>;

export const ListContactsQuerySchema = z.object({
  search: searchParam(128),
  organization_id: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
  sort_by: z._default(z.enum(['name', 'email', 'created_at']), 'created_at'),
  sort_order: z._default(z.enum(['asc', 'desc']), 'desc'),
  ...pageParams(15),
});
export type ListContactsQuery = z.infer<typeof ListContactsQuerySchema>;

export const ContactParamsSchema = z.object({ contactId: z.string().check(z.minLength(1), z.maxLength(64)) });
export const ContactEmailParamsSchema = z.object({ email: z.string().check(z.minLength(1), z.maxLength(320)) });
