/**
 * The automation constants that code without the request schemas needs (services,
 * repositories, consumers, other domains). Kept apart from model.ts: importing
 * a limit must not build the API schemas at a cold start (model.ts re-exports
 * them).
 */

/** Condition operators of api-spec "Automation". */
export const CONDITION_OPS = [
  'equals',
  'notequal',
  'greaterthan',
  'greaterthanorequalto',
  'lessthan',
  'lessthanorequalto',
  'contains',
  'notcontain',
  'startswith',
  'notstartwith',
  'endswith',
  'notendwith',
  'containsoneormoreof',
  'containsnoneof',
] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

export const TIME_FIELDS = ['hoursSinceCreated', 'hoursSinceUpdated', 'hoursSinceResolved'] as const;
/** decisions §8, besides `customField:<id>`. */
export const CONDITION_FIELDS = ['status', 'priority', 'type', 'subject', 'tags', 'assigneeId', 'requesterEmail', 'groupId', ...TIME_FIELDS] as const;
export const ACTION_FIELDS = ['status', 'priority', 'type', 'assigneeId', 'groupId', 'addTags', 'removeTags'] as const;
export const CUSTOM_FIELD_PREFIX = 'customField:';
/** Limits that keep one evaluation bounded (an event reads every automation of its account). */
export const MAX_AUTOMATIONS = 100;
export const MAX_CONDITIONS = 50;
export const MAX_ACTIONS = 20;
