import * as z from '../zod.ts';

/** decisions §15: a page holds at most 1,000 changes. */
export const EXPORT_PAGE_MAX = 1_000;

export const ExportQuerySchema = z.object({
  start_time: z.describe(
    z.optional(
      z.pipe(
        z.iso.datetime({ offset: true }),
        z.transform((v) => new Date(v).toISOString()),
      ),
    ),
    'ISO 8601: the first call starts at changes made at or after this instant',
  ),
  cursor: z.describe(z.optional(z.string().check(z.minLength(1), z.maxLength(4096))), 'The `cursor` of the previous page: every later call resumes from it'),
  page_size: z.describe(z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(EXPORT_PAGE_MAX)), EXPORT_PAGE_MAX), 'Changes per page (1-1,000, default 1,000)'),
});
export type ExportQuery = z.infer<typeof ExportQuerySchema>;

/** One change of the export: the record at its latest state, or a tombstone. */
export const exportPageSchema = <T extends z.ZodMiniType>(object: T, id: string) =>
  z.meta(
    z.object({
      items: z.array(
        z.union([
          z.object({ id: z.string(), updatedAt: z.iso.datetime(), deleted: z.literal(false), object: z.describe(object, 'The record as its GET answers it') }),
          z.object({ id: z.string(), updatedAt: z.describe(z.iso.datetime(), 'When it was deleted'), deleted: z.literal(true) }),
        ]),
      ),
      cursor: z.describe(z.string(), 'Resume here: the next page, or, at endOfStream, the changes made since'),
      endOfStream: z.describe(z.boolean(), 'True when every settled change up to now has been answered; resume later from cursor'),
    }),
    { id },
  );
