/**
 * The group constants that code without the request schemas needs (services,
 * repositories, consumers, other domains). Kept apart from model.ts: importing
 * a limit must not build the API schemas at a cold start (model.ts re-exports
 * them).
 */

export const DISTRIBUTION_MODES = ['manual', 'roundRobin', 'leastBusy', 'skills'] as const;
export type DistributionMode = (typeof DISTRIBUTION_MODES)[number];

/** Members per group: the member map lives in the group item, so its size is bounded (docs/decisions.md "Groups"). */
export const MAX_MEMBERS = 500;
export const MAX_SKILLS = 20;
