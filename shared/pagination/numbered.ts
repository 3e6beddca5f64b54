import * as z from 'zod';

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

const pageNumber = z
  .string()
  .refine(isPageNumber, `must be a whole number from 1 to ${MAX_PAGE}`)
  .transform(Number)
  .default(1)
  // The query string carries text; the published parameter is the integer it stands for.
  .meta({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE,
    description: 'Page number, 1 (the default) to 2^53; a page past the last one answers data [] with the same meta total',
  } as Record<string, unknown>);

/** Query parameters of page-number lists (decisions §5): page 1..2^53, limit 1..100. */
export const pageParams = (defaultLimit: number) => ({
  page: pageNumber,
  limit: z.coerce.number().int().min(1).max(100).default(defaultLimit),
});

export const PageMetaSchema = z
  .object({
    // The page asked for, up to 2^53 (one past the safe integers that .int() is limited to).
    page: z
      .number()
      .refine((n) => Number.isInteger(n) && n >= 1 && n <= MAX_PAGE)
      .meta({ type: 'integer', minimum: 1, maximum: MAX_PAGE } as Record<string, unknown>),
    limit: z.number().int(),
    total: z.number().int(),
    totalPages: z.number().int(),
  })
  .meta({ id: 'PageMeta' });

export const pageMeta = (page: number, limit: number, total: number) => ({ page, limit, total, totalPages: Math.ceil(total / limit) });

/** The non-v1 support-desk success envelope (decisions §3). */
export const dataEnvelope = <T extends z.ZodType>(data: T, id: string) => z.object({ success: z.literal(true), data }).meta({ id });
export const listEnvelope = <T extends z.ZodType>(item: T, id: string) => z.object({ success: z.literal(true), data: z.array(item), meta: PageMetaSchema }).meta({ id });
