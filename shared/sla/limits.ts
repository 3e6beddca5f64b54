/**
 * The SLA constants that code without the request schemas needs (services,
 * repositories, consumers, other domains). Kept apart from model.ts: importing
 * a limit must not build the API schemas at a cold start (model.ts re-exports
 * them).
 */

export const SLA_METRICS = ['firstReply', 'nextReply', 'resolution'] as const;
export type SlaMetric = (typeof SLA_METRICS)[number];
export const TIME_MODES = ['businessHours', 'calendarHours'] as const;
export type TimeMode = (typeof TIME_MODES)[number];

/** An account has at most this many policies: reorder rewrites them all in one transaction. */
export const MAX_POLICIES = 50;

/** api-spec "SLA policy": the field/operator pairs a condition may use. */
export const CONDITION_OPERATORS = {
  priority: ['is', 'is_not'],
  type: ['is', 'is_not'],
  status: ['is', 'is_not'],
  tags: ['contains_any'],
  assignee_id: ['is', 'is_not', 'is_set', 'is_not_set'],
  requester_domain: ['is', 'is_not'],
  customField: ['is', 'is_not', 'is_set', 'is_not_set', 'contains_any'],
} as const;
export const OPERATORS = ['is', 'is_not', 'contains_any', 'is_set', 'is_not_set'] as const;
export type ConditionOperator = (typeof OPERATORS)[number];
export const CUSTOM_FIELD_PREFIX = 'customField:';
