import * as z from 'zod';
import { pageParams } from '../pagination/numbered.ts';
import { plainText } from '../text.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';
import { DISTRIBUTION_MODES, MAX_SKILLS } from './limits.ts';

export * from './limits.ts';

const id = z.string().min(1).max(64);
const cap = z.number().int().positive().max(100_000).nullable();
const skill = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[^\s,]+$/, 'skills are single tokens, like tags');
const skills = z
  .array(skill)
  .max(MAX_SKILLS)
  .transform((s) => [...new Set(s)]);

/** The group resource (api-spec "Group"). */
export const GroupSchema = z
  .object({
    id: z.string().describe('Prefixed grp_'),
    name: z.string(),
    description: z.string().nullable(),
    isPrivate: z.boolean(),
    distributionMode: z.enum(DISTRIBUTION_MODES),
    leadUserId: z.string().nullable(),
    maxOpenTickets: z.number().int().nullable().describe("Per-agent cap of open tickets in this group (a member's own maxOpenTickets overrides it)"),
    maxOpenTicketsGlobal: z.number().int().nullable().describe('Distribution skips an agent with this many open tickets across all groups'),
    isActive: z.boolean(),
    isDefault: z.boolean(),
    memberCount: z.number().int(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Group' });
export type Group = z.infer<typeof GroupSchema>;
export const GROUP_FIELDS = Object.keys(GroupSchema.shape) as (keyof Group)[];

/** A membership (decisions §9). */
export const MemberSchema = z
  .object({
    userId: z.string(),
    groupId: z.string(),
    maxOpenTickets: z.number().int().nullable(),
    skills: z.array(z.string()),
    addedAt: z.iso.datetime(),
  })
  .meta({ id: 'GroupMember' });
export type Member = z.infer<typeof MemberSchema>;

const groupInput = {
  name: plainText(100),
  description: z.string().max(512).nullable(),
  distributionMode: z.enum(DISTRIBUTION_MODES),
  isPrivate: z.boolean(),
  maxOpenTickets: cap,
  maxOpenTicketsGlobal: cap,
};

export const CreateGroupBodySchema = z
  .object({
    ...groupInput,
    description: groupInput.description.default(null),
    distributionMode: groupInput.distributionMode.default('manual'),
    isPrivate: groupInput.isPrivate.default(false),
    maxOpenTickets: cap.default(null),
    maxOpenTicketsGlobal: cap.default(null),
  })
  .meta({ id: 'CreateGroupRequest', description: 'The first group of an account becomes its default group.' });
export type CreateGroupInput = z.infer<typeof CreateGroupBodySchema>;

export const UpdateGroupBodySchema = z.object(groupInput).partial().meta({ id: 'UpdateGroupRequest', description: 'Only the given fields change.' });
export type UpdateGroupInput = z.infer<typeof UpdateGroupBodySchema>;

export const AddMemberBodySchema = z
  .object({ userId: id, maxOpenTickets: cap.optional(), skills: skills.optional() })
  .meta({ id: 'AddGroupMemberRequest', description: 'The user must be an active user of the account with agent role or above.' });
export type AddMemberInput = z.infer<typeof AddMemberBodySchema>;

export const UpdateMemberBodySchema = z.object({ maxOpenTickets: cap.optional(), skills: skills.optional() }).meta({ id: 'UpdateGroupMemberRequest' });
export type UpdateMemberInput = z.infer<typeof UpdateMemberBodySchema>;

/** decisions §9: a bulk change names 1..100 users (422 above); repeats count once. */
const bulkUserIds = z
  .array(id)
  .min(1)
  .max(100)
  .transform((u) => [...new Set(u)]);

export const BulkAddMembersBodySchema = z
  .object({ userIds: bulkUserIds })
  .meta({ id: 'BulkAddGroupMembersRequest', description: '1..100 users, all or nothing: one unfit user refuses the whole request. Users already members are left as they are.' });
export const BulkRemoveMembersBodySchema = z.object({ userIds: bulkUserIds }).meta({ id: 'BulkRemoveGroupMembersRequest', description: 'Users that are not members are ignored.' });
export const SetLeadBodySchema = z.object({ userId: id.nullable() }).meta({ id: 'SetGroupLeadRequest', description: 'A member of the group, or null to clear the lead.' });

export const DistributionTestBodySchema = z
  .object({
    ticket: z
      .object({
        tags: z.array(z.string().trim().min(1).max(64)).max(100).default([]),
        priority: z.enum(TICKET_PRIORITIES).default('normal'),
        status: z.enum(TICKET_STATUSES).default('new'),
        type: z.enum(TICKET_TYPES).default('question'),
        subject: z.string().max(255).optional(),
      })
      .default({ tags: [], priority: 'normal', status: 'new', type: 'question' }),
  })
  .meta({ id: 'DistributionTestRequest' });
export type DistributionTestInput = z.infer<typeof DistributionTestBodySchema>;

export const SKIP_REASONS = ['atMemberCap', 'atGroupCap', 'atGlobalCap', 'missingSkill', 'inactiveUser', 'notNextInTurn'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export const DistributionTestResultSchema = z
  .object({
    groupId: z.string(),
    distributionMode: z.enum(DISTRIBUTION_MODES),
    assigneeId: z.string().nullable().describe('The member who would get the ticket now, or null'),
    reason: z.string().nullable().describe('Why nobody would get it (manual mode, inactive group, nobody eligible), else null'),
    members: z.array(
      z.object({
        userId: z.string(),
        selected: z.boolean(),
        reason: z.enum(SKIP_REASONS).nullable().describe('Why this member would not get it; null for the selected member'),
        openTickets: z.number().int().describe('Open tickets assigned to the agent across all groups'),
        openTicketsInGroup: z.number().int(),
        cap: z.number().int().nullable().describe('The cap in this group that applies to the member'),
        lastAssignedAt: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'DistributionTestResult' });

const bool = z.enum(['true', 'false']).transform((v) => v === 'true');

export const ListGroupsQuerySchema = z.object({
  fields: z
    .string()
    .max(512)
    .transform((s, ctx) => {
      const names = s
        .split(',')
        .map((f) => f.trim())
        .filter(Boolean);
      const unknown = names.filter((n) => !(GROUP_FIELDS as string[]).includes(n));
      if (unknown.length) ctx.addIssue({ code: 'custom', message: `unknown field(s): ${unknown.join(', ')}; known: ${GROUP_FIELDS.join(', ')}` });
      return names as (keyof Group)[];
    })
    .optional()
    .describe(`Comma-separated attribute names to return (id is always included): ${GROUP_FIELDS.join(', ')}`),
  isActive: bool.optional(),
  isPrivate: bool.optional(),
  ...pageParams(50),
});
export type ListGroupsQuery = z.infer<typeof ListGroupsQuerySchema>;

export const GroupParamsSchema = z.object({ groupId: id });
export const MemberParamsSchema = z.object({ groupId: id, userId: id });
