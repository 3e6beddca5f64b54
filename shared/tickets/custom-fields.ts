import type { Caller } from '../auth/principal.ts';
import type { TxWrite } from '../db/transact.ts';
import type { FieldIssue } from '../domain/errors.ts';
import { listAllFields, optionIdsByValue, optionUsageWrite, type FieldRecord } from '../ticket-fields/api.ts';
import { optionValuesOf, type CustomFieldValue } from '../ticket-fields/values.ts';

/** The fields stamp a caller's request carries: a user's, from the authorizer's cached answer; none for a mail or an automation. */
export const fieldsStampOf = (c: Caller): number | undefined => ('fieldsStamp' in c ? c.fieldsStamp : undefined);

/** Accounts whose field definitions this function keeps, with the stamp they were read under (shared/ticket-fields/stamp.ts). */
const kept = new Map<string, { stamp: number; fields: Map<string, FieldRecord> }>();
/** A function instance serves many accounts: the oldest read is dropped past this many. */
const KEPT_ACCOUNTS = 500;

/**
 * An account's custom fields by id: the ticket validator's one Query, or none.
 * With the fields stamp the request carries (the authorizer's cached answer),
 * the definitions read under that stamp are kept and used again until a
 * request carries another; they are read consistently, so what is kept under a
 * stamp holds every change that stamp counts. Without a stamp (an uncached
 * authorizer, an inbound mail, an automation) they are read every time.
 */
export async function fieldMap(accountId: string, stamp?: number): Promise<Map<string, FieldRecord>> {
  if (stamp === undefined) return new Map((await listAllFields(accountId)).map((f) => [f.id, f]));
  const hit = kept.get(accountId);
  if (hit?.stamp === stamp) return hit.fields;
  const fields = new Map((await listAllFields(accountId, { consistent: true })).map((f) => [f.id, f]));
  kept.delete(accountId);
  if (kept.size >= KEPT_ACCOUNTS) kept.delete(kept.keys().next().value!);
  kept.set(accountId, { stamp, fields });
  return fields;
}

/**
 * Option usage deltas between two sets of custom-field values, as writes for
 * the ticket's transaction; unknown option values become validation issues.
 */
export async function optionUsageWrites(accountId: string, fields: Map<string, FieldRecord>, before: CustomFieldValue[], after: CustomFieldValue[], issues: FieldIssue[]): Promise<TxWrite[]> {
  const writes: TxWrite[] = [];
  const valuesOf = (list: CustomFieldValue[], id: string) => new Set(optionValuesOf(fields.get(id), list.find((c) => c.id === id)?.value));
  const ids = new Set([...before, ...after].map((c) => c.id).filter((id) => fields.has(id)));
  for (const id of ids) {
    const old = valuesOf(before, id);
    const now = valuesOf(after, id);
    const added = [...now].filter((v) => !old.has(v));
    const removed = [...old].filter((v) => !now.has(v));
    if (!added.length && !removed.length) continue;
    const optionIds = await optionIdsByValue(accountId, id, [...added, ...removed]);
    for (const v of added) {
      const optionId = optionIds.get(v);
      if (!optionId) issues.push({ field: 'customFields', message: `"${v}" is not an option of ${fields.get(id)!.fieldKey}` });
      else writes.push(optionUsageWrite(accountId, id, optionId, 1));
    }
    for (const v of removed) {
      const optionId = optionIds.get(v);
      if (optionId) writes.push(optionUsageWrite(accountId, id, optionId, -1));
    }
  }
  return writes;
}
