/**
 * What other modules use of the export: the tombstone a delete of a ticket,
 * contact, organization or user writes in its own transaction, so a resuming
 * sync sees the delete (decisions §15).
 */
export { tombstonePut as tombstoneWrite } from './repository.ts';
export type { ExportKind } from './repository.ts';
