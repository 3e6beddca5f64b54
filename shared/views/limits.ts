/**
 * The view constants that code without the request schemas needs (services,
 * repositories, consumers, other domains). Kept apart from model.ts: importing
 * a limit must not build the API schemas at a cold start (model.ts re-exports
 * them).
 */

/** decisions §21: per account 100 shared views, per user 20 personal ones. */
export const MAX_SHARED_VIEWS = 100;
export const MAX_PERSONAL_VIEWS = 20;

export const CONDITION_FIELDS = ['status', 'priority', 'type', 'assigneeId', 'groupId', 'requesterEmail', 'tags', 'hoursSinceCreated', 'hoursSinceUpdated'] as const;
export const CONDITION_OPERATORS = ['is', 'isNot', 'in', 'notIn', 'includes', 'excludes', 'lessThan', 'greaterThan'] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];
