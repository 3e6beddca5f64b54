import { bindEntity } from '../db/entity.ts';
import { ticketFieldEntities } from '../db/entities/ticket-fields.ts';
import type { TxWrite } from '../db/transact.ts';

/**
 * The account's field-definitions stamp (issue 42: a create that costs what it
 * writes). Every write of a field or of its options moves it in the same
 * transaction. When the authorizer's answers are cached, the authorizer reads
 * it (consistently) into the request's context, and a function keeps the
 * account's field definitions between requests for as long as the stamp it is
 * handed is the one it read them under (shared/tickets/custom-fields.ts). A
 * field change then flushes the authorizer cache, so the very next request
 * carries the new stamp: the change is seen at once, with no read of the
 * fields on the requests between changes.
 */
const stamps = bindEntity<{ accountId: string; stamp: number }>(ticketFieldEntities.fieldsStamp, { fields: ['stamp'] });

/** The write that moves the stamp, in the transaction of a field's (or its options') change. */
export const fieldsStampWrite = (accountId: string): TxWrite => stamps.updateAttributes({ accountId }, { add: { stamp: 1 } });

/** The account's stamp as committed (0: its fields never changed since stamps exist). */
export async function readFieldsStamp(accountId: string): Promise<number> {
  const r = await stamps.get({ accountId }, { consistent: true });
  return Number(r?.stamp ?? 0);
}
