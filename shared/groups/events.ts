/** EventBridge source of group events: internal work items for the group-distribution consumer. */
export const GROUP_EVENT_SOURCE = 'support-desk.groups';
/** Capacity may have freed (or a group may distribute again): backfill the named groups' waiting tickets. */
export const GROUP_CAPACITY_CHANGED = 'group.capacity.changed';
/** A group was marked deleted: detach its tickets and drop its counters, then the group item. */
export const GROUP_DELETED = 'group.deleted';
export const GROUP_EVENT_TYPES = [GROUP_CAPACITY_CHANGED, GROUP_DELETED] as const;
