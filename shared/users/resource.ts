/**
 * The user resource as the API answers it: what the history and export routes
 * and the docs need, without the request schemas (model.ts, which re-exports
 * it).
 */
import * as z from '../zod.ts';
import { USER_ROLES, USER_STATUSES } from '../auth/principal.ts';

const timestamp = z.describe(z.iso.datetime(), 'ISO 8601 UTC');

/** The user resource of the user-management interface (snake_case, api-spec "User"). */
export const UserSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed usr_'),
    email: z.string(),
    name: z.string(),
    avatar_url: z.nullable(z.string()),
    role: z.enum(USER_ROLES),
    status: z.enum(USER_STATUSES),
    created_at: timestamp,
    updated_at: timestamp,
    last_login_at: z.nullable(timestamp),
  }),
  { id: 'User' },
);
export type UserDto = z.infer<typeof UserSchema>;

export const UserListItemSchema = z.meta(z.pick(UserSchema, { id: true, email: true, name: true, role: true, status: true, created_at: true }), { id: 'UserListItem' });
export const MeSchema = z.meta(z.pick(UserSchema, { id: true, email: true, name: true, created_at: true, role: true }), { id: 'Me' });

export const UserListSchema = z.meta(
  z.object({
    data: z.array(UserListItemSchema),
    pagination: z.object({ next_cursor: z.nullable(z.string()), has_more: z.boolean(), total_count: z.describe(z.number().check(z.int()), 'Capped at 10,000') }),
  }),
  { id: 'UserList' },
);
