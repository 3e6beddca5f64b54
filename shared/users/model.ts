import * as z from '../zod.ts';
import { searchParam } from '../search/words.ts';
import { plainText } from '../text.ts';
import { USER_ROLES, USER_STATUSES } from '../auth/principal.ts';

export * from './resource.ts';

const email = z.email({ error: 'must be a valid email address' }).check(z.maxLength(254));
const name = plainText(200);

export const CreateUserBodySchema = z.meta(
  z.object({
    email,
    name,
    // owner is not on offer (decisions §1): the schema says so, and the message says what to do instead.
    role: z._default(
      z.enum(['admin', 'member', 'viewer'] as const satisfies readonly (typeof USER_ROLES)[number][], {
        error: (issue) => (issue.input === 'owner' ? 'an account has exactly one owner; transfer ownership with PATCH instead' : undefined),
      }),
      'member',
    ),
    send_invitation: z._default(z.boolean(), true),
  }),
  { id: 'CreateUserRequest' },
);
export type CreateUserBody = z.infer<typeof CreateUserBodySchema>;

export const UpdateUserBodySchema = z.meta(
  z.object({
    name: z.optional(name),
    role: z.optional(z.enum(USER_ROLES)),
    status: z.optional(z.enum(['active', 'suspended'], { error: 'must be active or suspended' })),
  }),
  { id: 'UpdateUserRequest' },
);
export type UpdateUserBody = z.infer<typeof UpdateUserBodySchema>;

export const UserSortSchema = z.enum(['created_at', 'name', 'email']);

export const ListUsersQuerySchema = z.object({
  limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 50),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(4096))),
  role: z.optional(z.enum(USER_ROLES)),
  status: z.optional(z.enum(USER_STATUSES)),
  search: searchParam(254),
  sort: z._default(UserSortSchema, 'created_at'),
  order: z._default(z.enum(['asc', 'desc']), 'desc'),
});
export type ListUsersQuery = z.infer<typeof ListUsersQuerySchema>;

export const UserIdParamsSchema = z.object({ user_id: z.string().check(z.minLength(1), z.maxLength(64)) });
