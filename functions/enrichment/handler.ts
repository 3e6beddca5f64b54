import { NotFoundError } from '#shared/domain/errors.ts';
import { transactWrite } from '#shared/db/transact.ts';
import { eventConsumer } from '#shared/events/consumer.ts';
import { newDomainEvent, outboxWrites } from '#shared/events/outbox.ts';
import { OrganizationEventDetailSchema } from '#shared/organizations/event-schemas.ts';
import { ORGANIZATION_DELETED, ORGANIZATION_EVENT_SOURCE } from '#shared/organizations/events.ts';
import { unlinkOrganizationContacts } from '#shared/contacts/organization-unlink.ts';
import { enrichOrganization } from '#shared/organizations/service.ts';

/** Contacts unlinked per message (well within the function timeout); a larger organization continues in a follow-up event. */
const UNLINK_PER_MESSAGE = 2_000;

/**
 * SQS consumer of organization events: organization.created fills company
 * facts (same code as POST .../enrich); organization.deleted finishes
 * unlinking the organization's contacts.
 */
export const handler = eventConsumer('enrichment', OrganizationEventDetailSchema, async (detail) => {
  const { id } = detail.data.organization;
  if (detail.event === ORGANIZATION_DELETED) {
    if (await unlinkOrganizationContacts(detail.accountId, id, UNLINK_PER_MESSAGE)) return;
    // Not done within this message's budget: the same event again (through the outbox, so it cannot be lost) continues the work.
    await transactWrite(outboxWrites([newDomainEvent(detail.accountId, ORGANIZATION_DELETED, detail.data)], ORGANIZATION_EVENT_SOURCE));
    return;
  }
  try {
    await enrichOrganization(detail.accountId, id);
  } catch (err) {
    // Deleted before enrichment ran: nothing to do.
    if (!(err instanceof NotFoundError)) throw err;
  }
});
