import * as z from '../zod.ts';
import { defineSettings } from '../config/settings.ts';

/** The email port (shared/email/port.ts): SES in a deployed stack, a folder of JSON files locally. */
export const emailSettings = defineSettings(
  'shared/email/port.ts',
  z
    .object({
      EMAIL_TRANSPORT: z.enum(['ses', 'file']),
      /** SES identity emails are sent from (EMAIL_TRANSPORT=ses). */
      EMAIL_FROM: z.optional(z.string().check(z.minLength(1))),
      SES_CONFIGURATION_SET: z.optional(z.string().check(z.minLength(1))),
      /** Local outbox folder (EMAIL_TRANSPORT=file). */
      EMAIL_OUTBOX_DIR: z.optional(z.string().check(z.minLength(1))),
    })
    .check(
      z.superRefine((e, ctx) => {
        if (e.EMAIL_TRANSPORT === 'ses' && !e.EMAIL_FROM) ctx.addIssue({ code: 'custom', path: ['EMAIL_FROM'], message: 'EMAIL_FROM is required with EMAIL_TRANSPORT=ses' });
        if (e.EMAIL_TRANSPORT === 'file' && !e.EMAIL_OUTBOX_DIR) ctx.addIssue({ code: 'custom', path: ['EMAIL_OUTBOX_DIR'], message: 'EMAIL_OUTBOX_DIR is required with EMAIL_TRANSPORT=file' });
      }),
    ),
);

/**
 * The stage's inbound mail domain (decisions §17): every account's inbound
 * address is `<account id in lower case>@<domain>`, a ticket's reply address
 * `<account id>+<reply token>@<domain>`. `inbound.localhost` locally.
 */
export const inboundSettings = defineSettings(
  'shared/email/addresses.ts',
  z.object({
    INBOUND_DOMAIN: z.string().check(z.regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/, 'a lower-case domain name')),
  }),
);
