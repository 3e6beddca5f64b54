/**
 * The local bus's rules, shared by its data plane (local/bus.ts, PutEvents)
 * and its control plane (local/bus-control.ts: rules added at run time,
 * replays): one list, routed alike.
 */
import { matchesPattern } from './lambda/patterns.ts';

export interface LocalRule {
  /** The rule's name (a replay's FilterArns name rules by ARN, which holds it). */
  name?: string;
  pattern: Record<string, unknown>;
  /** URLs of the rule's target queues. */
  queueUrls: string[];
  /** false: a disabled rule routes nothing. */
  enabled?: boolean;
  /** Targets by id, for rules added at run time (PutTargets); the template's rules have none here. */
  targets?: Map<string, string>;
}

/** The queues an event goes to: the targets of every enabled rule whose pattern matches it. */
export const targetQueues = (rules: readonly LocalRule[], event: unknown): string[] => rules.filter((r) => r.enabled !== false && matchesPattern(r.pattern, event)).flatMap((r) => r.queueUrls);
