import { declareEntity } from '../declaration.ts';

/** Privacy (decisions §23): the account's retention of closed tickets. */
export const privacyEntities = {
  retentionSettings: declareEntity({
    personal: [],
    type: 'retentionSettings',
    owner: 'privacy',
    description:
      "The account's retention of closed tickets (`closedTicketsDeleteAfterDays`, absent or null: kept). While one is set the item is in the sweep's index (`sweepAccountId`), so the daily sweep reads only the accounts that delete.",
    key: { pk: 'A#{accountId}', sk: 'RETENTION' },
    indexes: {
      sweep: {
        slot: 'gsi1',
        pk: 'RETENTION',
        sk: '{sweepAccountId}',
        pattern: 'the daily retention sweep: the accounts with a retention set (sparse: written only while one is)',
      },
    },
  }),
};
