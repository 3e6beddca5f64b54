import * as z from './zod.ts';

/**
 * The characters no name, file name or one-line text may hold (decisions §14),
 * defined here once for every schema that takes one:
 * - control characters (`\p{Cc}`: C0, DEL, C1);
 * - lone UTF-16 surrogates (`\p{Cs}`: with the `u` flag an unpaired half is a
 *   code point of its own): no UTF-8 holds them, so a header, a URL or an
 *   email built from the text cannot either (`encodeURIComponent` throws);
 * - the bidirectional controls U+061C, U+200E, U+200F, U+202A–U+202E and
 *   U+2066–U+2069, which reorder what is shown around them: the file name
 *   `invoice\u202Efdp.exe` reads as `invoiceexe.pdf`.
 * Other format characters (the zero-width joiners of emoji sequences, soft
 * hyphens) and right-to-left scripts themselves stay allowed.
 */
const CONTROL_CHARACTERS = '\\p{Cc}\\p{Cs}\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069';

/** One character of CONTROL_CHARACTERS, anywhere (global: for replacing them). */
export const CONTROL_CHARACTER = new RegExp(`[${CONTROL_CHARACTERS}]`, 'gu');

export const CONTROL_CHARACTERS_MESSAGE = 'must not contain control characters, bidirectional controls (such as U+202E) or lone surrogates';

/**
 * A whole text without CONTROL_CHARACTERS and without the characters of
 * `alsoRefused` (a character-class fragment, e.g. `/\\\\` for `/` and `\`):
 * one pattern, so the published schema carries the whole rule.
 */
export const textPattern = (alsoRefused = '') => new RegExp(`^[^${alsoRefused}${CONTROL_CHARACTERS}]*$`, 'u');

/** A trimmed single-line text of `min`..`max` characters without control characters (names, subjects, titles). */
export const plainText = (max: number, min = 1) =>
  z.string().check(z.trim(), z.minLength(min, min === 1 ? 'must not be empty' : undefined), z.maxLength(max), z.regex(textPattern(), CONTROL_CHARACTERS_MESSAGE));
