import { declareEntity } from '../declaration.ts';

export const groupEntities = {
  group: declareEntity({
    personal: [],
    type: 'group',
    owner: 'groups',
    description:
      'A group: its config and its member map (userId → cap, skills, addedAt) in one item, so member changes (bulk included) are atomic; `memberCount` is kept beside the map for lists; `deletingAt` while its deletion is finished.',
    key: { pk: 'A#{accountId}', sk: 'GROUP#{id}' },
    version: 'version',
    indexes: {
      byAccount: {
        slot: 'table',
        pk: 'A#{accountId}',
        sk: 'GROUP#{id}',
        pattern: "GET /v1/groups (few per account: one Query, ids time-ordered); the distributing groups of an agent whose capacity freed (projecting only that member's entry)",
      },
    },
  }),
  defaultGroup: declareEntity({
    personal: [],
    type: 'defaultGroup',
    owner: 'groups',
    description: "Guard naming the account's one default group (`groupId`): moved, or removed with the last group, in the transaction that changes it.",
    key: { pk: 'A#{accountId}', sk: 'DEFAULTGROUP' },
  }),
  groupLoad: declareEntity({
    personal: [],
    type: 'groupLoad',
    owner: 'groups',
    description: "An agent's open tickets in one group (`openTickets`, the group caps) and when the group last handed them one (`lastAssignedAt`, round robin).",
    key: { pk: 'A#{accountId}', sk: 'GLOAD#{groupId}#{userId}' },
    indexes: {
      byGroup: { slot: 'table', pk: 'A#{accountId}', sk: 'GLOAD#{groupId}#{userId}', pattern: "Deleting a group's per-agent counters once its deletion is finished" },
    },
  }),
  agentLoad: declareEntity({
    personal: [],
    type: 'agentLoad',
    owner: 'groups',
    description: 'Open tickets assigned to an agent across every group and none (`openTickets`): least-busy order and the global cap.',
    key: { pk: 'A#{accountId}', sk: 'AGENTLOAD#{userId}' },
  }),
  groupTicket: declareEntity({
    personal: [],
    type: 'groupTicket',
    owner: 'groups',
    description: 'A ticket of a group, kept in the ticket write that moves it, so deleting the group can detach its tickets.',
    key: { pk: 'A#{accountId}', sk: 'GTICKET#{groupId}#{ticketId}' },
    indexes: {
      byGroup: { slot: 'table', pk: 'A#{accountId}', sk: 'GTICKET#{groupId}#{ticketId}', pattern: 'Deleting a group (DELETE /v1/groups/:id, then the group.deleted consumer): the tickets to detach' },
    },
  }),
  groupWaiting: declareEntity({
    personal: [],
    type: 'groupWaiting',
    owner: 'groups',
    description: 'An open ticket of a group waiting for an agent (no assignee), kept in the ticket write that moves it.',
    key: { pk: 'A#{accountId}', sk: 'GWAIT#{groupId}#{ticketId}' },
    indexes: {
      byGroup: {
        slot: 'table',
        pk: 'A#{accountId}',
        sk: 'GWAIT#{groupId}#{ticketId}',
        pattern: 'Backfill (the group.capacity.changed consumer): waiting tickets of a group, oldest first (ticket ids are time-ordered)',
      },
    },
  }),
};
