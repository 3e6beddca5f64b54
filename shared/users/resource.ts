/**
 * The user resource as the API answers it: what the history and export routes
 * and the docs need, without the request schemas (model.ts, which re-exports
 * it).
 */
import * as z from 'zod';
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
