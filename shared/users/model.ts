import * as z from 'zod';
import { searchParam } from '../search/words.ts';
import { plainText } from '../text.ts';
import { USER_ROLES, USER_STATUSES } from '../auth/principal.ts';

const timestamp = z.iso.datetime().describe('ISO 8601 UTC');

/** The user resource of the user-management interface (snake_case, api-spec "User"). */
export const UserSchema = z
  .object({
    id: z.string().describe('Prefixed usr_'),
    email: z.string(),
    name: z.string(),
    avatar_url: z.string().nullable(),
    role: z.enum(USER_ROLES),
    status: z.enum(USER_STATUSES),
    created_at: timestamp,
    updated_at: timestamp,
    last_login_at: timestamp.nullable(),
  })
  .meta({ id: 'User' });
export type UserDto = z.infer<typeof UserSchema>;

export const UserListItemSchema = UserSchema.pick({ id: true, email: true, name: true, role: true, status: true, created_at: true }).meta({ id: 'UserListItem' });
export const MeSchema = UserSchema.pick({ id: true, email: true, name: true, created_at: true, role: true }).meta({ id: 'Me' });

export const UserListSchema = z
  .object({
    data: z.array(UserListItemSchema),
    pagination: z.object({ next_cursor: z.string().nullable(), has_more: z.boolean(), total_count: z.number().int().describe('Capped at 10,000') }),
  })
  .meta({ id: 'UserList' });

const email = z.email({ error: 'must be a valid email address' }).max(254);
const name = plainText(200);

export const CreateUserBodySchema = z
  .object({
    email,
    name,
    // owner is not on offer (decisions §1): the schema says so, and the message says what to do instead.
    role: z
      .enum(USER_ROLES)
      .exclude(['owner'], { error: (issue) => (issue.input === 'owner' ? 'an account has exactly one owner; transfer ownership with PATCH instead' : undefined) })
      .default('member'),
    send_invitation: z.boolean().default(true),
  })
  .meta({ id: 'CreateUserRequest' });
export type CreateUserBody = z.infer<typeof CreateUserBodySchema>;

export const UpdateUserBodySchema = z
  .object({
    name: name.optional(),
    role: z.enum(USER_ROLES).optional(),
    status: z.enum(['active', 'suspended'], { error: 'must be active or suspended' }).optional(),
  })
  .meta({ id: 'UpdateUserRequest' });
export type UpdateUserBody = z.infer<typeof UpdateUserBodySchema>;

export const UserSortSchema = z.enum(['created_at', 'name', 'email']);

export const ListUsersQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().min(1).max(4096).optional(),
  role: z.enum(USER_ROLES).optional(),
  status: z.enum(USER_STATUSES).optional(),
  search: searchParam(254),
  sort: UserSortSchema.default('created_at'),
  order: z.enum(['asc', 'desc']).default('desc'),
});
export type ListUsersQuery = z.infer<typeof ListUsersQuerySchema>;

export const UserIdParamsSchema = z.object({ user_id: z.string().min(1).max(64) });
