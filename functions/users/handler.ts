import * as accounts from '#shared/accounts/service.ts';
import { apiKeyRoutes } from '#shared/accounts/contract.ts';
import { httpGroup } from '#shared/http/middleware.ts';
import { userRoutes } from '#shared/users/contract.ts';
import * as users from '#shared/users/service.ts';

const { toUserDto } = users;

export const handler = httpGroup([...userRoutes, ...apiKeyRoutes], {
  listUsers: async ({ principal, query }) => {
    const page = await users.listUsers(principal, query);
    return {
      data: page.users.map((u) => {
        const { id, email, name, role, status, created_at } = toUserDto(u);
        return { id, email, name, role, status, created_at };
      }),
      pagination: { next_cursor: page.nextCursor, has_more: page.nextCursor !== null, total_count: page.totalCount },
    };
  },
  getMe: async ({ principal }) => {
    const { id, email, name, created_at, role } = toUserDto(await users.getMe(principal));
    return { id, email, name, created_at, role };
  },
  getUser: async ({ principal, params }) => toUserDto(await users.getUser(principal, params.user_id)),
  createUser: async ({ principal, body }) => toUserDto(await users.createUser(principal, body, { answer: toUserDto })),
  updateUser: async ({ principal, params, body }) => toUserDto(await users.updateUser(principal, params.user_id, body)),
  deleteUser: async ({ principal, params }) => users.deleteUser(principal, params.user_id),
  createApiKey: async ({ principal, body }) => accounts.createApiKeyFor(principal, body, { answer: (created) => created }),
  listApiKeys: async ({ principal }) => ({ data: await accounts.listApiKeysFor(principal) }),
  revokeApiKey: async ({ principal, params }) => accounts.revokeApiKeyFor(principal, params.key_id),
});
