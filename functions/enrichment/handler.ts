import { NotFoundError } from '../../shared/domain/errors.ts';
import { eventConsumer } from '../../shared/events/consumer.ts';
import { ORGANIZATION_CREATED } from '../../shared/organizations/events.ts';
import { enrichOrganization } from '../../shared/organizations/service.ts';

/** SQS consumer of organization.created: fills company facts in the background (same code as POST .../enrich). */
export const handler = eventConsumer('enrichment', async (detail) => {
  if (detail.event !== ORGANIZATION_CREATED) return;
  const { id } = detail.data.organization as { id: string };
  try {
    await enrichOrganization(detail.accountId, id);
  } catch (err) {
    // Deleted before enrichment ran: nothing to do.
    if (!(err instanceof NotFoundError)) throw err;
  }
});
