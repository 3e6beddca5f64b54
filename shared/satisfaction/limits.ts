/**
 * The satisfaction constants that code without the request schemas needs (services,
 * repositories, consumers, other domains). Kept apart from model.ts: importing
 * a limit must not build the API schemas at a cold start (model.ts re-exports
 * them).
 */

/** How long a survey link works (decisions §24). */
export const SURVEY_TOKEN_DAYS = 28;
/** The longest comment the page takes (decisions §24). */
export const COMMENT_MAX = 2_000;
