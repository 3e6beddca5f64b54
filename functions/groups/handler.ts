import { groupRoutes } from '#shared/groups/contract.ts';
import * as groups from '#shared/groups/service.ts';
import { httpGroup } from '#shared/http/middleware.ts';
import { pageMeta } from '#shared/pagination/numbered.ts';
import { detachGroup } from '#shared/tickets/service.ts';

const ok = (data: unknown) => ({ success: true, data });
const one = async (accountId: string, g: groups.GroupRecord) => ok(groups.toGroupDto(g, await groups.defaultGroupId(accountId)));

export const handler = httpGroup(groupRoutes, {
  listGroups: async ({ principal, query }) => {
    const page = await groups.listGroups(principal, query);
    return { ...ok(page.items), meta: pageMeta(query.page, query.limit, page.total) };
  },
  createGroup: async ({ principal, body }) => {
    const created = ({ group, defaultId }: { group: groups.GroupRecord; defaultId: string }) => ok(groups.toGroupDto(group, defaultId));
    return created(await groups.createGroup(principal, body, { answer: created }));
  },
  getGroup: async ({ principal, params }) => {
    const { group, defaultId } = await groups.getGroup(principal, params.groupId);
    return ok(groups.toGroupDto(group, defaultId));
  },
  updateGroup: async ({ principal, params, body }) => one(principal.accountId, await groups.updateGroup(principal, params.groupId, body)),
  deleteGroup: async ({ principal, params }) => groups.deleteGroup(principal, params.groupId, detachGroup),
  listGroupMembers: async ({ principal, params }) => ok(await groups.listMembers(principal, params.groupId)),
  addGroupMember: async ({ principal, params, body }) => ok(await groups.addMember(principal, params.groupId, body, { answer: ok })),
  updateGroupMember: async ({ principal, params, body }) => ok(await groups.updateMember(principal, params.groupId, params.userId, body)),
  removeGroupMember: async ({ principal, params }) => groups.removeMember(principal, params.groupId, params.userId),
  bulkAddGroupMembers: async ({ principal, params, body }) => ok(await groups.bulkAddMembers(principal, params.groupId, body.userIds, { answer: ok })),
  bulkRemoveGroupMembers: async ({ principal, params, body }) => ok(await groups.bulkRemoveMembers(principal, params.groupId, body.userIds)),
  setGroupLead: async ({ principal, params, body }) => one(principal.accountId, await groups.setLead(principal, params.groupId, body.userId)),
  deactivateGroup: async ({ principal, params }) => one(principal.accountId, await groups.setActive(principal, params.groupId, false)),
  reactivateGroup: async ({ principal, params }) => one(principal.accountId, await groups.setActive(principal, params.groupId, true)),
  makeDefaultGroup: async ({ principal, params }) => one(principal.accountId, await groups.makeDefault(principal, params.groupId)),
  testGroupDistribution: async ({ principal, params, body }) => ok(await groups.testDistribution(principal, params.groupId, body)),
});
