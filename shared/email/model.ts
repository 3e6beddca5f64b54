import * as z from '../zod.ts';
import { plainText } from '../text.ts';

/** How many support addresses an account may name (decisions §17). */
export const MAX_SUPPORT_ADDRESSES = 10;

/** GET /helpdesk/api/email/settings (decisions §17). */
export const EmailSettingsSchema = z.meta(
  z.object({
    inboundAddress: z.describe(z.string(), 'Mail to this address becomes tickets and replies: `<account id in lower case>@<inbound domain>`'),
    supportAddresses: z.describe(z.array(z.string()), "Addresses of the account's own domains that customers write to and that forward to the inbound address"),
    fromName: z.describe(z.nullable(z.string()), "The display name of the service's mail to customers (null: the address alone)"),
  }),
  { id: 'EmailSettings' },
);
export type EmailSettings = z.infer<typeof EmailSettingsSchema>;

/** PUT /helpdesk/api/email/settings: the fields given change, the others stay. */
export const UpdateEmailSettingsBodySchema = z.meta(
  z.strictObject({
    supportAddresses: z.optional(
      z.array(z.email().check(z.maxLength(254))).check(
        z.maxLength(MAX_SUPPORT_ADDRESSES, `at most ${MAX_SUPPORT_ADDRESSES} support addresses`),
        z.refine((list) => new Set(list.map((a) => a.toLowerCase())).size === list.length, 'each address once'),
      ),
    ),
    fromName: z.optional(z.nullable(plainText(128))),
  }),
  { id: 'UpdateEmailSettingsRequest' },
);
export type UpdateEmailSettingsInput = z.infer<typeof UpdateEmailSettingsBodySchema>;
