import { exportContacts } from '../contacts/service.ts';
import type { ExportFeed } from '../exports/service.ts';
import type { ExportKind } from '../exports/api.ts';
import { exportOrganizations } from '../organizations/service.ts';
import { exportTickets } from '../tickets/service.ts';
import { exportUsers } from '../users/service.ts';

/**
 * The incremental export's feeds (decisions §15), one per exported kind: each
 * module's own export function, assembled here, above every module it reads,
 * so that the exports module (tombstones, the change index) stays below the
 * modules that write tombstones through it. A new kind adds its feed here and
 * its route in ./contract.ts.
 */
export const EXPORT_FEEDS: Record<ExportKind, ExportFeed> = {
  ticket: exportTickets,
  contact: exportContacts,
  organization: exportOrganizations,
  user: exportUsers,
};
