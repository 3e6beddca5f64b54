import { declareEntity } from '../declaration.ts';

export const ticketEntities = {
  ticket: declareEntity({
    type: 'ticket',
    owner: 'tickets',
    description: 'A ticket. Its `type` field is stored as `ticketType` (`type` names the item kind throughout the table).',
    key: { pk: 'A#{accountId}', sk: 'TICKET#{id}' },
    version: 'version',
    indexes: {
      byCreated: { slot: 'table', pk: 'A#{accountId}', sk: 'TICKET#{id}', pattern: 'GET /v1/tickets sort_by=created_at (ids are time-ordered)' },
      byUpdated: { slot: 'gsi1', pk: 'A#{accountId}#TICKETS', sk: '{updatedAt}#{id}', pattern: 'GET /v1/tickets sort_by=updated_at' },
      byStatus: {
        slot: 'gsi2',
        pk: 'A#{accountId}#TICKETS',
        sk: '{statusRank}#{id}',
        pattern: 'GET /v1/tickets sort_by=status (workflow order); open tickets (new, open, pending) for SLA recompute and group backfill',
      },
      byPriority: { slot: 'gsi3', pk: 'A#{accountId}#TICKETS', sk: '{priorityRank}#{id}', pattern: 'GET /v1/tickets sort_by=priority (low..urgent)' },
    },
  }),
};
