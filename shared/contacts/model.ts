import * as z from 'zod';
import { searchParam } from '../search/words.ts';
import { plainText } from '../text.ts';
import { pageParams } from '../pagination/numbered.ts';
import { CONTACT_EMAIL_MAX } from './limits.ts';

export * from './resource.ts';

export * from './limits.ts';

const name = plainText(128);
const email = z.email({ error: 'must be a valid email address' }).max(CONTACT_EMAIL_MAX);
const notes = z.string().max(10_000).nullable();
const organizationId = z.string().min(1).max(64).nullable();

export const CreateContactBodySchema = z
  .object({ name, email, organizationId: organizationId.optional(), notes: notes.optional() })
  .meta({ id: 'CreateContactRequest', description: "Without organizationId, a contact whose email domain is an organization's domain is linked to it (free-mail domains excepted)." });
export type CreateContactInput = z.infer<typeof CreateContactBodySchema>;

export const UpdateContactBodySchema = z
  .object({ name: name.optional(), email: email.optional(), organizationId: organizationId.optional(), notes: notes.optional() })
  .meta({ id: 'UpdateContactRequest' });
export type UpdateContactInput = z.infer<typeof UpdateContactBodySchema>;

export const ListContactsQuerySchema = z.object({
  search: searchParam(128),
  organization_id: z.string().min(1).max(64).optional(),
  sort_by: z.enum(['name', 'email', 'created_at']).default('created_at'),
  sort_order: z.enum(['asc', 'desc']).default('desc'),
  ...pageParams(15),
});
export type ListContactsQuery = z.infer<typeof ListContactsQuerySchema>;

export const ContactParamsSchema = z.object({ contactId: z.string().min(1).max(64) });
export const ContactEmailParamsSchema = z.object({ email: z.string().min(1).max(320) });
