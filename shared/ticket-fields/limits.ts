/**
 * The ticket-field constants that code without the request schemas needs
 * (repositories, other services). Kept apart from model.ts, whose schemas pull
 * in the safe-regex engine: importing a limit must not add it to a bundle.
 */
export const FIELD_TYPES = ['text', 'textarea', 'number', 'decimal', 'checkbox', 'date', 'dropdown', 'multiselect', 'regex'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export const OPTION_TYPES: readonly FieldType[] = ['dropdown', 'multiselect'];

/** api-spec Limits: options per ticket field. */
export const MAX_OPTIONS_PER_FIELD = 2000;

/** Option values become part of a key (the value guard), so they are bounded; a longer value cannot name an option. */
export const OPTION_VALUE_MAX = 128;
