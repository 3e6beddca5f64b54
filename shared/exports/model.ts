import * as z from 'zod';

/** decisions §15: a page holds at most 1,000 changes. */
export const EXPORT_PAGE_MAX = 1_000;

export const ExportQuerySchema = z.object({
  start_time: z.iso
    .datetime({ offset: true })
    .transform((v) => new Date(v).toISOString())
    .optional()
    .describe('ISO 8601: the first call starts at changes made at or after this instant'),
  cursor: z.string().min(1).max(4096).optional().describe('The `cursor` of the previous page: every later call resumes from it'),
  page_size: z.coerce.number().int().min(1).max(EXPORT_PAGE_MAX).default(EXPORT_PAGE_MAX).describe('Changes per page (1-1,000, default 1,000)'),
});
export type ExportQuery = z.infer<typeof ExportQuerySchema>;

/** One change of the export: the record at its latest state, or a tombstone. */
export const exportPageSchema = <T extends z.ZodType>(object: T, id: string) =>
  z
    .object({
      items: z.array(
        z.union([
          z.object({ id: z.string(), updatedAt: z.iso.datetime(), deleted: z.literal(false), object: object.describe('The record as its GET answers it') }),
          z.object({ id: z.string(), updatedAt: z.iso.datetime().describe('When it was deleted'), deleted: z.literal(true) }),
        ]),
      ),
      cursor: z.string().describe('Resume here: the next page, or, at endOfStream, the changes made since'),
      endOfStream: z.boolean().describe('True when every settled change up to now has been answered; resume later from cursor'),
    })
    .meta({ id });
