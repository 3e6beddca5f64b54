import * as z from 'zod';
import { searchParam } from '../search/words.ts';
import { plainText } from '../text.ts';
import { pageParams } from '../pagination/numbered.ts';

export const ContactSchema = z
  .object({
    id: z.string().describe('Prefixed con_'),
    name: z.string(),
    email: z.string(),
    organizationId: z.string().nullable(),
    organizationName: z.string().nullable(),
    notes: z.string().nullable(),
    ticketCount: z.number().int().describe("Tickets whose requesterEmail is this contact's email"),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Contact' });
export type Contact = z.infer<typeof ContactSchema>;

const name = plainText(128);
/** Contact emails are part of a key (the email guard); an email over this length cannot be a contact's. */
export const CONTACT_EMAIL_MAX = 128;
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

/** Domains of free-mail providers: a contact there is a person, not a company's employee. */
export const FREE_MAIL_DOMAINS = new Set([
  'gmail.com',
  'googlemail.com',
  'yahoo.com',
  'yahoo.co.uk',
  'ymail.com',
  'hotmail.com',
  'hotmail.co.uk',
  'outlook.com',
  'live.com',
  'msn.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  'mail.com',
  'yandex.com',
  'yandex.ru',
  'zoho.com',
  'fastmail.com',
  'hey.com',
  'tutanota.com',
  'qq.com',
  '163.com',
  'mail.ru',
]);

export const emailDomain = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();
