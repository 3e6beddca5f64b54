import { declareEntity } from '../declaration.ts';

export const automationEntities = {
  automationSet: declareEntity({
    personal: [],
    type: 'automationSet',
    owner: 'automations',
    description:
      "The account's automation set: evaluation order, the count of active time rules, and a version every automation write checks and bumps (writes of one account serialize). Shares the `AUTOMATION` prefix with the automations, so one Query reads both.",
    key: { pk: 'A#{accountId}', sk: 'AUTOMATION' },
    version: 'version',
    indexes: {
      timeAccounts: {
        slot: 'gsi4',
        pk: 'AUTOMATION_TIME_ACCOUNTS',
        sk: '{timeAccount}',
        pattern: 'The hourly time-rule job: accounts with at least one active time-based automation (sparse: only while timeRules > 0; never a Scan)',
      },
    },
  }),
  automation: declareEntity({
    personal: [],
    type: 'automation',
    owner: 'automations',
    description: "An automation (name, active flag, rule); its position comes from the set's order.",
    key: { pk: 'A#{accountId}', sk: 'AUTOMATION#{id}' },
    indexes: {
      withSet: {
        slot: 'table',
        pk: 'A#{accountId}',
        sk: 'AUTOMATION#{id}',
        pattern: 'The set item and every automation in one Query on the prefix `AUTOMATION`: rule evaluation on every ticket event, GET /automations, every automation write',
      },
    },
  }),
  automationRun: declareEntity({
    personal: [],
    type: 'automationRun',
    owner: 'automations',
    description: "Marks that an automation acted on a ticket event, written in the change's own transaction, so a redelivered event is not applied twice; kept for SQS's 14-day retention.",
    key: { pk: 'A#{accountId}', sk: 'AUTORUN#{eventId}' },
    expires: true,
  }),
};
