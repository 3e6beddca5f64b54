import { declareEntity } from '../declaration.ts';

export const macroEntities = {
  macroSet: declareEntity({
    type: 'macroSet',
    owner: 'macros',
    personal: [],
    description:
      "The account's macros as a whole: a version every macro write checks and bumps, so the limits (100 shared, 20 personal per user) stay exact. Shares the `MACRO` prefix with the macros, so one Query reads both.",
    key: { pk: 'A#{accountId}', sk: 'MACRO' },
    version: 'version',
  }),
  macro: declareEntity({
    type: 'macro',
    owner: 'macros',
    personal: [],
    description: 'A macro (decisions §22): title, actions, personal owner.',
    key: { pk: 'A#{accountId}', sk: 'MACRO#{id}' },
    indexes: {
      withSet: {
        slot: 'table',
        pk: 'A#{accountId}',
        sk: 'MACRO#{id}',
        pattern: 'The set item and every macro in one Query on the prefix `MACRO`: GET /v1/macros, every macro write; a macro by key to preview or apply it',
      },
    },
  }),
};
