import { declareEntity } from '../declaration.ts';

export const viewEntities = {
  viewSet: declareEntity({
    type: 'viewSet',
    owner: 'views',
    personal: [],
    description:
      "The account's views as a whole: a version every view write bumps and every count change checks (a count is never moved by a judgement made against views since changed), and the count of views with time conditions. Shares the `VIEW` prefix with the views, so one Query reads both.",
    key: { pk: 'A#{accountId}', sk: 'VIEW' },
    version: 'version',
    indexes: {
      timeAccounts: {
        slot: 'gsi4',
        pk: 'VIEW_TIME_ACCOUNTS',
        sk: '{timeAccount}',
        pattern: 'The scheduled pass: accounts with a view with time conditions or a background count owed (sparse; never a Scan)',
      },
    },
  }),
  view: declareEntity({
    type: 'view',
    owner: 'views',
    personal: [],
    description:
      'A view (decisions §21): title, conditions, sort, personal owner; its live count (`count`), the revision the count belongs to (`rev`, moved by every edit) and whether the background count of that revision is done (`ready`).',
    key: { pk: 'A#{accountId}', sk: 'VIEW#{id}' },
    indexes: {
      withSet: {
        slot: 'table',
        pk: 'A#{accountId}',
        sk: 'VIEW#{id}',
        pattern: 'The set item and every view in one Query on the prefix `VIEW`: GET /v1/views, every view write, the count consumer judging a ticket; counts by key (BatchGetItem)',
      },
    },
  }),
  viewMembership: declareEntity({
    type: 'viewMembership',
    owner: 'views',
    personal: [],
    description:
      "The views (`<viewId>:<rev>`) a ticket is counted in: each view's count is the number of these items that name it. Moved with the counts in one transaction, checked by `rev`, which only grows: an empty one (a ticket in no view, or deleted) stays and expires after 14 days.",
    key: { pk: 'A#{accountId}', sk: 'VMEM#{ticketId}' },
    expires: true,
  }),
  viewEventMark: declareEntity({
    type: 'viewEventMark',
    owner: 'views',
    personal: [],
    description: 'Marks a ticket event the view counts have applied, written in the same transaction, so a redelivered event is applied once; kept for SQS retention.',
    key: { pk: 'A#{accountId}', sk: 'VEVT#{eventId}' },
    expires: true,
  }),
};
