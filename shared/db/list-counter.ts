import { bindEntity } from './entity.ts';
import { counterEntities } from './entities/counters.ts';
import type { TxWrite } from './transact.ts';

/** A page-number list whose unfiltered total is counted (counterEntities.listCounter). */
export type CountedList = 'CONTACTS' | 'ORGS' | `TMSG#${string}`;

const counters = bindEntity<{ accountId: string; list: string; n: number }>(counterEntities.listCounter, { fields: ['n'] });

export const listCounter = {
  /** The transaction write that moves the list's count by `delta` (created on first use). */
  write: (accountId: string, list: CountedList, delta: number): TxWrite => counters.updateAttributes({ accountId, list }, { add: { n: delta } }),
  /** As `write`, only while the list is empty (its count absent or 0); `error` when it is not. */
  writeIfEmpty: (accountId: string, list: CountedList, delta: number, error: () => Error): TxWrite =>
    counters.updateAttributes({ accountId, list }, { add: { n: delta } }, { expr: 'attribute_not_exists(#cn) OR #cn <= :zero', names: { '#cn': 'n' }, values: { ':zero': 0 }, error }),
  /** The list's count, or undefined when it was never written. */
  read: async (accountId: string, list: CountedList): Promise<number | undefined> => {
    const c = await counters.get({ accountId, list });
    return c ? Number(c.n ?? 0) : undefined;
  },
  /** The counter's key, for removing it with the list it counted (a deleted ticket's messages). */
  key: (accountId: string, list: CountedList) => counters.key({ accountId, list }),
};
