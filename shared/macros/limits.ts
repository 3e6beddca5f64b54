/**
 * The macro constants that code without the request schemas needs (services,
 * repositories, consumers, other domains). Kept apart from model.ts: importing
 * a limit must not build the API schemas at a cold start (model.ts re-exports
 * them).
 */

/** decisions §22: the limits of views (§21). */
export const MAX_SHARED_MACROS = 100;
export const MAX_PERSONAL_MACROS = 20;

export const ACTION_FIELDS = ['status', 'priority', 'type', 'assigneeId', 'groupId', 'tags', 'addTags', 'removeTags', 'comment'] as const;
