import * as z from '../zod.ts';

/** The `meta` of a cursor-paged v1 list (ticket fields, tickets, audits): the page size asked for and whether more follow. */
export const PageMetaSchema = z.object({ pageSize: z.number().check(z.int()), hasMore: z.boolean() });
/** The `links` of a cursor-paged v1 list. */
export const LinksSchema = z.object({ next: z.describe(z.nullable(z.string()), 'Relative path of the next page (all query parameters kept, plus after=<cursor>), or null') });
