import * as z from 'zod';

/** No control characters or lone surrogates: names and subjects are shown in UIs and emails. */
const PRINTABLE = /^[^\p{Cc}\p{Cs}]*$/u;

/** A trimmed single-line text of `min`..`max` characters without control characters. */
export const plainText = (max: number, min = 1) =>
  z
    .string()
    .trim()
    .min(min, min === 1 ? 'must not be empty' : undefined)
    .max(max)
    .regex(PRINTABLE, 'must not contain control characters');
