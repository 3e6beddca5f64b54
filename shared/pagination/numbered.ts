import * as z from 'zod';

/** Query parameters of page-number lists (decisions §5): page >= 1, limit 1..100. */
export const pageParams = (defaultLimit: number) => ({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(defaultLimit),
});

export const PageMetaSchema = z.object({ page: z.number().int(), limit: z.number().int(), total: z.number().int(), totalPages: z.number().int() }).meta({ id: 'PageMeta' });

export const pageMeta = (page: number, limit: number, total: number) => ({ page, limit, total, totalPages: Math.ceil(total / limit) });

/** The non-v1 support-desk success envelope (decisions §3). */
export const dataEnvelope = <T extends z.ZodType>(data: T, id: string) => z.object({ success: z.literal(true), data }).meta({ id });
export const listEnvelope = <T extends z.ZodType>(item: T, id: string) => z.object({ success: z.literal(true), data: z.array(item), meta: PageMetaSchema }).meta({ id });
