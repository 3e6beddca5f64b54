import * as z from '../zod.ts';

/**
 * The deepest page a page-number list takes (decisions §5): 2^53, one past
 * Number.MAX_SAFE_INTEGER. Every page up to it is a number the list can
 * answer (a page past the last one is empty); a larger one is a 400.
 */
export const MAX_PAGE = 2 ** 53;

/**
 * Decimal digits (leading zeros allowed) of a whole number from 1 to
 * MAX_PAGE, checked on the text: a number past 2^53 is not exact as a double
 * (9007199254740993 would read as 2^53), so it is refused before it is one.
 */
const isPageNumber = (s: string) => /^0*[1-9][0-9]{0,15}$/.test(s) && BigInt(s) <= BigInt(MAX_PAGE);

const pageNumber = z.meta(z._default(z.pipe(z.string().check(z.refine(isPageNumber, `must be a whole number from 1 to ${MAX_PAGE}`)), z.transform(Number)), 1), {
  type: 'integer',
  minimum: 1,
  maximum: MAX_PAGE,
  description: 'Page number, 1 (the default) to 2^53; a page past the last one answers data [] with the same meta total',
} as Record<string, unknown>);

/** Query parameters of page-number lists (decisions §5): page 1..2^53, limit 1..100. */
export const pageParams = (defaultLimit: number) => ({
  page: pageNumber,
  limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), defaultLimit),
});

export const PageMetaSchema = z.meta(
  z.object({
    // The page asked for, up to 2^53 (one past the safe integers that .int() is limited to).
    page: z.meta(z.number().check(z.refine((n) => Number.isInteger(n) && n >= 1 && n <= MAX_PAGE)), { type: 'integer', minimum: 1, maximum: MAX_PAGE } as Record<string, unknown>),
    limit: z.number().check(z.int()),
    total: z.number().check(z.int()),
    totalPages: z.number().check(z.int()),
  }),
  { id: 'PageMeta' },
);

export const pageMeta = (page: number, limit: number, total: number) => ({ page, limit, total, totalPages: Math.ceil(total / limit) });

/** The non-v1 support-desk success envelope (decisions §3). */
export const dataEnvelope = <T extends z.ZodMiniType>(data: T, id: string) => z.meta(z.object({ success: z.literal(true), data }), { id });
export const listEnvelope = <T extends z.ZodMiniType>(item: T, id: string) => z.meta(z.object({ success: z.literal(true), data: z.array(item), meta: PageMetaSchema }), { id });
