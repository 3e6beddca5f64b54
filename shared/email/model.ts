import * as z from 'zod';
import { plainText } from '../text.ts';

/** How many support addresses an account may name (decisions §17). */
export const MAX_SUPPORT_ADDRESSES = 10;

/** GET /helpdesk/api/email/settings (decisions §17). */
export const EmailSettingsSchema = z
  .object({
    inboundAddress: z.string().describe('Mail to this address becomes tickets and replies: `<account id in lower case>@<inbound domain>`'),
    supportAddresses: z.array(z.string()).describe("Addresses of the account's own domains that customers write to and that forward to the inbound address"),
    fromName: z.string().nullable().describe("The display name of the service's mail to customers (null: the address alone)"),
  })
  .meta({ id: 'EmailSettings' });
export type EmailSettings = z.infer<typeof EmailSettingsSchema>;

/** PUT /helpdesk/api/email/settings: the fields given change, the others stay. */
export const UpdateEmailSettingsBodySchema = z
  .object({
    supportAddresses: z
      .array(z.email().max(254))
      .max(MAX_SUPPORT_ADDRESSES, `at most ${MAX_SUPPORT_ADDRESSES} support addresses`)
      .refine((list) => new Set(list.map((a) => a.toLowerCase())).size === list.length, 'each address once')
      .optional(),
    fromName: plainText(128).nullable().optional(),
  })
  .strict()
  .meta({ id: 'UpdateEmailSettingsRequest' });
export type UpdateEmailSettingsInput = z.infer<typeof UpdateEmailSettingsBodySchema>;
