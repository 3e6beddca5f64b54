import { bindEntity } from '../db/entity.ts';
import { privacyEntities } from '../db/entities/privacy.ts';
import { queryPage, type Key } from '../db/query.ts';
import type { TxWrite } from '../db/transact.ts';

/** The account's retention of closed tickets (decisions §23), as stored. */
export interface RetentionRecord {
  accountId: string;
  closedTicketsDeleteAfterDays: number | null;
  updatedAt: string;
}

const retention = bindEntity<RetentionRecord>(privacyEntities.retentionSettings, {
  fields: ['accountId', 'closedTicketsDeleteAfterDays', 'updatedAt'],
  // In the sweep's index only while a retention is set (a sparse index: no value, no entry).
  keyValues: (r) => ({ sweepAccountId: r.closedTicketsDeleteAfterDays ? r.accountId : null }),
});

export const getRetention = (accountId: string) => retention.get({ accountId }, { consistent: true });

/** The setting's write, for the transaction that audits it. */
export const retentionWrite = (r: RetentionRecord): TxWrite => retention.put(r);

/** A page of the accounts with a retention set, with their setting (the sweep's index). */
export async function retentionAccounts(limit: number, startKey?: Key): Promise<{ items: RetentionRecord[]; nextKey?: Key }> {
  const page = await queryPage<Record<string, unknown>>({ ...retention.query('sweep', {}), limit, startKey });
  return { items: page.items.map(retention.fromItem), nextKey: page.nextKey };
}
