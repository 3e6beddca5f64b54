import { contactEntities } from './entities/contacts.ts';
import { counterEntities } from './entities/counters.ts';
import { organizationEntities } from './entities/organizations.ts';
import { searchEntities } from './entities/search.ts';
import { ticketEntities } from './entities/tickets.ts';
import { groupEntities } from './entities/groups.ts';
import { webhookEntities } from './entities/webhooks.ts';
import { messageEntities } from './entities/messages.ts';
import { attachmentEntities } from './entities/attachments.ts';
import { emailEntities } from './entities/email.ts';
import { eventEntities } from './entities/events.ts';
import { ticketFieldEntities } from './entities/ticket-fields.ts';
import { automationEntities } from './entities/automations.ts';
import { slaEntities } from './entities/sla.ts';
import { userEntities } from './entities/users.ts';
import { accountEntities } from './entities/accounts.ts';
import { idempotencyEntities } from './entities/idempotency.ts';
import { historyEntities } from './entities/history.ts';
import { jobEntities } from './entities/jobs.ts';
import { satisfactionEntities } from './entities/satisfaction.ts';
import { privacyEntities } from './entities/privacy.ts';
import { viewEntities } from './entities/views.ts';
import { macroEntities } from './entities/macros.ts';

/**
 * The index of the table's entities: every entity's key templates and the
 * index slots it occupies, declared once in `entities/<module>.ts` (see
 * entity.ts). docs/data-model.md is generated from this catalog
 * (`npm run data-model`), and a test keeps the two equal. Only the docs and the
 * tests import it: a repository imports its own module's declarations
 * (`entities/<module>.ts`), so a function's bundle carries the entities it
 * uses, not the table's 63.
 */
export const ENTITIES = {
  ...counterEntities,
  ...contactEntities,
  ...organizationEntities,
  ...ticketEntities,
  ...groupEntities,
  ...webhookEntities,
  ...messageEntities,
  ...attachmentEntities,
  ...emailEntities,
  ...eventEntities,
  ...searchEntities,
  ...ticketFieldEntities,
  ...automationEntities,
  ...slaEntities,
  ...userEntities,
  ...accountEntities,
  ...idempotencyEntities,
  ...historyEntities,
  ...jobEntities,
  ...satisfactionEntities,
  ...privacyEntities,
  ...viewEntities,
  ...macroEntities,
};
