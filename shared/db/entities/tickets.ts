import { declareEntity } from '../declaration.ts';

export const ticketEntities = {
  ticket: declareEntity({
    personal: ['requesterEmail', 'requesterName', 'searchText'],
    type: 'ticket',
    owner: 'tickets',
    description: 'A ticket. Its `type` field is stored as `ticketType` (`type` names the item kind throughout the table).',
    key: { pk: 'A#{accountId}', sk: 'TICKET#{id}' },
    version: 'version',
    indexes: {
      byCreated: { slot: 'table', pk: 'A#{accountId}', sk: 'TICKET#{id}', pattern: 'GET /v1/tickets sort_by=created_at (ids are time-ordered)' },
      changes: {
        slot: 'gsi4',
        pk: 'A#{accountId}#CHG#TICKET#{changeShard}',
        sk: '{updatedAt}#{id}',
        pattern: 'GET /v1/exports/tickets (incremental export), 8 write shards by id merged in updatedAt order',
      },
      byUpdated: { slot: 'gsi1', pk: 'A#{accountId}#TICKETS', sk: '{updatedAt}#{id}', pattern: 'GET /v1/tickets sort_by=updated_at' },
      byStatus: {
        slot: 'gsi2',
        pk: 'A#{accountId}#TICKETS',
        sk: '{statusRank}#{id}',
        pattern: 'GET /v1/tickets sort_by=status (workflow order); open tickets (new, open, pending) for SLA recompute and group backfill',
      },
      byPriority: { slot: 'gsi3', pk: 'A#{accountId}#TICKETS', sk: '{priorityRank}#{id}', pattern: 'GET /v1/tickets sort_by=priority (low..urgent)' },
      // The views of decisions §13. A partition per (status, priority) and per (assignee, status): a filter on one of
      // them reads the few partitions it spans (status: 4, priority: 5, assignee: 5) merged in sort order, so a page
      // reads at most partitions x (page + 1) keys, and one account's writes spread over many partitions.
      byStatusPriority: {
        slot: 'gsi5',
        pk: 'A#{accountId}#TV#S#{status}#{priority}',
        sk: '{id}',
        pattern: 'GET /v1/tickets status= and/or priority=, sort_by=created_at (merged over the partitions the filter spans)',
      },
      byStatusPriorityUpdated: {
        slot: 'gsi6',
        pk: 'A#{accountId}#TV#S#{status}#{priority}',
        sk: '{updatedAt}#{id}',
        pattern: 'GET /v1/tickets status= and/or priority=, sort_by=updated_at',
      },
      byAssigneeStatus: {
        slot: 'gsi7',
        pk: 'A#{accountId}#TV#A#{assigneeId}#{status}',
        sk: '{id}',
        pattern: 'GET /v1/tickets assignee_id= (with or without status=), sort_by=created_at (sparse: assigned tickets only)',
      },
      byAssigneeStatusUpdated: {
        slot: 'gsi8',
        pk: 'A#{accountId}#TV#A#{assigneeId}#{status}',
        sk: '{updatedAt}#{id}',
        pattern: 'GET /v1/tickets assignee_id= (with or without status=), sort_by=updated_at',
      },
    },
  }),
  ticketChangeTally: declareEntity({
    type: 'ticketChangeTally',
    owner: 'tickets',
    personal: [],
    description:
      "Ticket changes of an account as view counts follow them (decisions §21), 8 shards by ticket id: `made` moves in the transaction that records a ticket.created/updated/deleted event, `applied` when the view-count consumer has applied one. `applied` >= `made` in every shard: the account's counts are fresh.",
    key: { pk: 'A#{accountId}', sk: 'TCHG#{shard}' },
  }),
};
