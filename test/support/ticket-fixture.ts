import type { TicketRecord } from '#shared/tickets/repository.ts';

/** A ticket record for the unit tables of the ticket rules (no I/O, fixed ids and times); `over` sets any field. */
export const ticketFixture = (over: Partial<TicketRecord> = {}): TicketRecord => ({
  id: 'tkt_1',
  accountId: 'acct_1',
  subject: 'Printer',
  status: 'open',
  priority: 'normal',
  type: 'question',
  assigneeId: null,
  requesterEmail: null,
  requesterName: null,
  groupId: null,
  tags: [],
  customFields: [],
  mergedInto: null,
  satisfactionRating: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  version: 3,
  ...over,
});
