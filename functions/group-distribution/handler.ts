import { eventConsumer } from '#shared/events/consumer.ts';
import { GROUP_CAPACITY_CHANGED, GroupEventDetailSchema } from '#shared/groups/events.ts';
import { backfillGroup, finishGroupDeletion } from '#shared/groups/service.ts';
import { detachGroup, distributeWaiting } from '#shared/tickets/service.ts';

/**
 * SQS consumer of group events: group.capacity.changed backfills the named
 * groups' oldest waiting tickets; group.deleted finishes a deletion. Both
 * re-read state and write conditionally, so redelivery is harmless.
 */
export const handler = eventConsumer('group-distribution', GroupEventDetailSchema, async (detail) => {
  if (detail.event === GROUP_CAPACITY_CHANGED) {
    for (const groupId of detail.data.groupIds) await backfillGroup(detail.accountId, groupId, distributeWaiting);
  } else await finishGroupDeletion(detail.accountId, detail.data.groupId, detachGroup);
});
