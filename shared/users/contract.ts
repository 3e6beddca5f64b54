import { defineRoutes } from '../http/contract.ts';
import { CreateUserBodySchema, ListUsersQuerySchema, MeSchema, UpdateUserBodySchema, UserIdParamsSchema, UserListSchema, UserSchema } from './model.ts';

const BASE = '/playbook/api/v1/users';

/** User management (api-spec "User-management endpoints"; permissions in decisions §1). */
export const userRoutes = defineRoutes([
  {
    operationId: 'listUsers',
    method: 'GET',
    path: BASE,
    group: 'users',
    summary: 'List users',
    description:
      'Cursor-paginated. Filters role, status, search (name or email, case-insensitive); sort created_at|name|email, order desc|asc. The cursor carries the filters and sort of the first query and expires after 24 hours. Bounded work: a request reads at most 1,000 users; a filtered page that reaches that budget answers the matches found so far (possibly fewer than limit) with has_more true and a cursor that continues from there. total_count is counted once, up to 10,000.',
    query: ListUsersQuerySchema,
    success: { status: 200, description: 'A page of users', schema: UserListSchema },
    errors: [400],
  },
  {
    operationId: 'getMe',
    method: 'GET',
    path: `${BASE}/me`,
    group: 'users',
    summary: 'The calling user',
    success: { status: 200, description: 'The calling user', schema: MeSchema },
  },
  {
    operationId: 'getUser',
    method: 'GET',
    path: `${BASE}/{user_id}`,
    group: 'users',
    summary: 'Get a user',
    params: UserIdParamsSchema,
    success: { status: 200, description: 'The user', schema: UserSchema },
    errors: [404],
  },
  {
    operationId: 'createUser',
    method: 'POST',
    path: BASE,
    group: 'users',
    summary: 'Invite a user',
    description: 'Owners and admins may invite any role except owner; members may invite members and viewers. The new user is `invited` until the first login.',
    // Checked before the body is validated (a viewer gets 403 whatever it sends); the finer rules are in the users service.
    access: 'agent',
    body: CreateUserBodySchema,
    success: { status: 201, description: 'The created user (status invited)', schema: UserSchema },
    errors: [400, 403, 409],
  },
  {
    operationId: 'updateUser',
    method: 'PATCH',
    path: `${BASE}/{user_id}`,
    group: 'users',
    summary: 'Update a user',
    description: 'Owners and admins only. `role: owner` on another user, sent by the owner, transfers ownership atomically (the former owner becomes admin). The owner cannot be suspended.',
    access: 'admin',
    params: UserIdParamsSchema,
    body: UpdateUserBodySchema,
    success: { status: 200, description: 'The updated user', schema: UserSchema },
    errors: [400, 403, 404, 409],
  },
  {
    operationId: 'deleteUser',
    method: 'DELETE',
    path: `${BASE}/{user_id}`,
    group: 'users',
    summary: 'Delete a user',
    description: 'Owners and admins only; permanent. The owner cannot be deleted (409).',
    access: 'admin',
    params: UserIdParamsSchema,
    success: { status: 204, description: 'Deleted' },
    errors: [403, 404, 409],
  },
]);
