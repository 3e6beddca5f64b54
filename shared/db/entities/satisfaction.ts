import { declareEntity } from '../declaration.ts';

export const satisfactionEntities = {
  satisfactionSettings: declareEntity({
    personal: [],
    type: 'satisfactionSettings',
    owner: 'satisfaction',
    description: "The account's satisfaction survey setting (decisions §24): whether a resolved ticket's requester gets the survey mail.",
    key: { pk: 'A#{accountId}', sk: 'SATISFACTIONSETTINGS' },
    version: 'version',
  }),
  surveyToken: declareEntity({
    personal: [],
    type: 'surveyToken',
    owner: 'satisfaction',
    description:
      "A survey link's token (decisions §24): 160 random bits naming one ticket of one account, for 28 days (`validUntil`; `expiresAt` is the table's TTL). Not under the account: the public page knows only the token.",
    key: { pk: 'SURVEY#{token}', sk: 'SURVEY' },
    expires: true,
  }),
  satisfactionRating: declareEntity({
    personal: ['comment'],
    type: 'satisfactionRating',
    owner: 'satisfaction',
    description: "A ticket's satisfaction rating (one per ticket; a later click changes it), with the assignee and group the ticket had when rated.",
    key: { pk: 'A#{accountId}', sk: 'RATING#{ticketId}' },
    version: 'version',
    indexes: {
      byRated: { slot: 'gsi1', pk: 'A#{accountId}#RATINGS', sk: '{ratedAt}#{ticketId}', pattern: 'GET /v1/satisfaction_ratings, newest first, since/until as a sort-key range' },
      byScore: { slot: 'gsi2', pk: 'A#{accountId}#RATINGS#{score}', sk: '{ratedAt}#{ticketId}', pattern: 'GET /v1/satisfaction_ratings?score=good|bad' },
    },
  }),
};
