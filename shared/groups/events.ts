import * as z from '../zod.ts';
import { domainEventDetail } from '../events/detail.ts';

/** EventBridge source of group events: internal work items for the group-distribution consumer. */
export const GROUP_EVENT_SOURCE = 'support-desk.groups';
/** Capacity may have freed (or a group may distribute again): backfill the named groups' waiting tickets. */
export const GROUP_CAPACITY_CHANGED = 'group.capacity.changed';
/** A group was marked deleted: detach its tickets and drop its counters, then the group item. */
export const GROUP_DELETED = 'group.deleted';
export const GROUP_EVENT_TYPES = [GROUP_CAPACITY_CHANGED, GROUP_DELETED] as const;

/** group.capacity.changed: the groups to backfill, and the agent whose capacity freed when that was the cause. */
export const GroupCapacityChangedDetailSchema = domainEventDetail(GROUP_CAPACITY_CHANGED, z.object({ groupIds: z.array(z.string()), userId: z.optional(z.string()) }));
/** group.deleted: the group whose deletion the consumer finishes. */
export const GroupDeletedDetailSchema = domainEventDetail(GROUP_DELETED, z.object({ groupId: z.string() }));
/** What the group-distribution queue receives (rule group-events-to-distribution). */
export const GroupEventDetailSchema = z.discriminatedUnion('event', [GroupCapacityChangedDetailSchema, GroupDeletedDetailSchema]);
