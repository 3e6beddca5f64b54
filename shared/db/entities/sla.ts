import { declareEntity } from '../declaration.ts';

export const slaEntities = {
  slaPolicy: declareEntity({
    personal: [],
    type: 'slaPolicy',
    owner: 'sla',
    description: 'An SLA policy: conditions, per-priority targets, time mode and position in the evaluation order.',
    key: { pk: 'A#{accountId}', sk: 'SLAPOLICY#{id}' },
    indexes: {
      all: {
        slot: 'table',
        pk: 'A#{accountId}',
        sk: 'SLAPOLICY#{id}',
        pattern: 'GET /sla_policies (at most 50: one Query on the prefix, ordered by position in memory); the policy pick on every ticket event and recompute',
      },
    },
  }),
  slaPolicySet: declareEntity({
    personal: [],
    type: 'slaPolicySet',
    owner: 'sla',
    description: "Head of the account's SLA policies (count, next position); every create, delete and reorder checks and bumps its version, so a reorder sees exactly the current set.",
    key: { pk: 'A#{accountId}', sk: 'SLAPOLICYSET' },
    version: 'version',
  }),
  slaSchedule: declareEntity({
    personal: [],
    type: 'slaSchedule',
    owner: 'sla',
    description: "The account's business-hours schedule (absent: the default schedule).",
    key: { pk: 'A#{accountId}', sk: 'SLASCHEDULE' },
  }),
  slaState: declareEntity({
    personal: [],
    type: 'slaState',
    owner: 'sla',
    description: "One ticket's SLA state: facts, applied policy, reported breaches and the next deadline still watched.",
    key: { pk: 'A#{accountId}', sk: 'SLA#{ticketId}' },
    version: 'version',
    indexes: {
      due: {
        slot: 'gsi4',
        pk: 'SLADUE#{dueShard}',
        sk: '{nextDueAt}#{accountId}#{ticketId}',
        pattern:
          'The per-minute breach check: running deadlines up to now, earliest first, across accounts (sparse: only while a deadline runs; write-sharded over 8 partitions by ticket id so no partition is hot)',
      },
    },
  }),
};
