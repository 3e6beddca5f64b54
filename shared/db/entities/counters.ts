import { declareEntity } from '../declaration.ts';

/** Counters shared by several modules' lists; each is moved only inside the transaction of the change it counts. */
export const counterEntities = {
  listCounter: declareEntity({
    personal: [],
    type: 'counter',
    owner: 'db',
    description:
      "Item count (`n`) of a page-number list (`CONTACTS`, `ORGS`, `TMSG#<ticketId>`), moved in the same transactions as its creates and deletes: the list's unfiltered total without a walk.",
    key: { pk: 'A#{accountId}', sk: 'COUNT#{list}' },
  }),
};
