import * as z from 'zod';
import { searchParam } from '../search/words.ts';
import { plainText } from '../text.ts';
import { USER_ROLES, USER_STATUSES } from '../auth/principal.ts';

export * from './resource.ts';

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
