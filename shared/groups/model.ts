import * as z from '../zod.ts';
import { pageParams } from '../pagination/numbered.ts';
import { plainText } from '../text.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';
import { DISTRIBUTION_MODES, MAX_SKILLS } from './limits.ts';

export * from './limits.ts';

const id = z.string().check(z.minLength(1), z.maxLength(64));
const cap = z.nullable(z.number().check(z.int(), z.positive(), z.lte(100_000)));
const skill = z.string().check(z.trim(), z.minLength(1), z.maxLength(64), z.regex(/^[^\s,]+$/, 'skills are single tokens, like tags'));
const skills = z.pipe(
  z.array(skill).check(z.maxLength(MAX_SKILLS)),
  z.transform((s) => [...new Set(s)]),
);

/** The group resource (api-spec "Group"). */
export const GroupSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed grp_'),
    name: z.string(),
    description: z.nullable(z.string()),
    isPrivate: z.boolean(),
    distributionMode: z.enum(DISTRIBUTION_MODES),
    leadUserId: z.nullable(z.string()),
    maxOpenTickets: z.describe(z.nullable(z.number().check(z.int())), "Per-agent cap of open tickets in this group (a member's own maxOpenTickets overrides it)"),
    maxOpenTicketsGlobal: z.describe(z.nullable(z.number().check(z.int())), 'Distribution skips an agent with this many open tickets across all groups'),
    isActive: z.boolean(),
    isDefault: z.boolean(),
    memberCount: z.number().check(z.int()),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  }),
  { id: 'Group' },
);
export type Group = z.infer<typeof GroupSchema>;
export const GROUP_FIELDS = Object.keys(GroupSchema.shape) as (keyof Group)[];

/** A membership (decisions §9). */
export const MemberSchema = z.meta(
  z.object({
    userId: z.string(),
    groupId: z.string(),
    maxOpenTickets: z.nullable(z.number().check(z.int())),
    skills: z.array(z.string()),
    addedAt: z.iso.datetime(),
  }),
  { id: 'GroupMember' },
);
export type Member = z.infer<typeof MemberSchema>;

const groupInput = {
  name: plainText(100),
  description: z.nullable(z.string().check(z.maxLength(512))),
  distributionMode: z.enum(DISTRIBUTION_MODES),
  isPrivate: z.boolean(),
  maxOpenTickets: cap,
  maxOpenTicketsGlobal: cap,
};

export const CreateGroupBodySchema = z.meta(
  z.object({
    ...groupInput,
    description: z._default(groupInput.description, null),
    distributionMode: z._default(groupInput.distributionMode, 'manual'),
    isPrivate: z._default(groupInput.isPrivate, false),
    maxOpenTickets: z._default(cap, null),
    maxOpenTicketsGlobal: z._default(cap, null),
  }),
  { id: 'CreateGroupRequest', description: 'The first group of an account becomes its default group.' },
);
export type CreateGroupInput = z.infer<typeof CreateGroupBodySchema>;

export const UpdateGroupBodySchema = z.meta(z.partial(z.object(groupInput)), { id: 'UpdateGroupRequest', description: 'Only the given fields change.' });
export type UpdateGroupInput = z.infer<typeof UpdateGroupBodySchema>;

export const AddMemberBodySchema = z.meta(z.object({ userId: id, maxOpenTickets: z.optional(cap), skills: z.optional(skills) }), {
  id: 'AddGroupMemberRequest',
  description: 'The user must be an active user of the account with agent role or above.',
});
export type AddMemberInput = z.infer<typeof AddMemberBodySchema>;

export const UpdateMemberBodySchema = z.meta(z.object({ maxOpenTickets: z.optional(cap), skills: z.optional(skills) }), { id: 'UpdateGroupMemberRequest' });
export type UpdateMemberInput = z.infer<typeof UpdateMemberBodySchema>;

/** decisions §9: a bulk change names 1..100 users (422 above); repeats count once. */
const bulkUserIds = z.pipe(
  z.array(id).check(z.minLength(1), z.maxLength(100)),
  z.transform((u) => [...new Set(u)]),
);

export const BulkAddMembersBodySchema = z.meta(z.object({ userIds: bulkUserIds }), {
  id: 'BulkAddGroupMembersRequest',
  description: '1..100 users, all or nothing: one unfit user refuses the whole request. Users already members are left as they are.',
});
export const BulkRemoveMembersBodySchema = z.meta(z.object({ userIds: bulkUserIds }), { id: 'BulkRemoveGroupMembersRequest', description: 'Users that are not members are ignored.' });
export const SetLeadBodySchema = z.meta(z.object({ userId: z.nullable(id) }), { id: 'SetGroupLeadRequest', description: 'A member of the group, or null to clear the lead.' });

export const DistributionTestBodySchema = z.meta(
  z.object({
    ticket: z._default(
      z.object({
        tags: z._default(z.array(z.string().check(z.trim(), z.minLength(1), z.maxLength(64))).check(z.maxLength(100)), []),
        priority: z._default(z.enum(TICKET_PRIORITIES), 'normal'),
        status: z._default(z.enum(TICKET_STATUSES), 'new'),
        type: z._default(z.enum(TICKET_TYPES), 'question'),
        subject: z.optional(z.string().check(z.maxLength(255))),
      }),
      { tags: [], priority: 'normal', status: 'new', type: 'question' },
    ),
  }),
  { id: 'DistributionTestRequest' },
);
export type DistributionTestInput = z.infer<typeof DistributionTestBodySchema>;

export const SKIP_REASONS = ['atMemberCap', 'atGroupCap', 'atGlobalCap', 'missingSkill', 'inactiveUser', 'notNextInTurn'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export const DistributionTestResultSchema = z.meta(
  z.object({
    groupId: z.string(),
    distributionMode: z.enum(DISTRIBUTION_MODES),
    assigneeId: z.describe(z.nullable(z.string()), 'The member who would get the ticket now, or null'),
    reason: z.describe(z.nullable(z.string()), 'Why nobody would get it (manual mode, inactive group, nobody eligible), else null'),
    members: z.array(
      z.object({
        userId: z.string(),
        selected: z.boolean(),
        reason: z.describe(z.nullable(z.enum(SKIP_REASONS)), 'Why this member would not get it; null for the selected member'),
        openTickets: z.describe(z.number().check(z.int()), 'Open tickets assigned to the agent across all groups'),
        openTicketsInGroup: z.number().check(z.int()),
        cap: z.describe(z.nullable(z.number().check(z.int())), 'The cap in this group that applies to the member'),
        lastAssignedAt: z.nullable(z.string()),
      }),
    ),
  }),
  { id: 'DistributionTestResult' },
);

const bool = z.pipe(
  z.enum(['true', 'false']),
  z.transform((v) => v === 'true'),
);

export const ListGroupsQuerySchema = z.object({
  fields: z.describe(
    z.optional(
      z.pipe(
        z.string().check(z.maxLength(512)),
        z.transform((s, ctx) => {
          const names = s
            .split(',')
            .map((f) => f.trim())
            .filter(Boolean);
          const unknown = names.filter((n) => !(GROUP_FIELDS as string[]).includes(n));
          if (unknown.length) z.addIssue(ctx, `unknown field(s): ${unknown.join(', ')}; known: ${GROUP_FIELDS.join(', ')}`);
          return names as (keyof Group)[];
        }),
      ),
    ),
    `Comma-separated attribute names to return (id is always included): ${GROUP_FIELDS.join(', ')}`,
  ),
  isActive: z.optional(bool),
  isPrivate: z.optional(bool),
  ...pageParams(50),
});
export type ListGroupsQuery = z.infer<typeof ListGroupsQuerySchema>;

export const GroupParamsSchema = z.object({ groupId: id });
export const MemberParamsSchema = z.object({ groupId: id, userId: id });
