/**
 * What other modules may use of users: reading a user (ticket assignment, the
 * accounts module's key and login changes), the writes that create an
 * account's owner and record an API key's hash on its user (in the accounts
 * module's transactions), and the user item's key and reading for the
 * authorizer's one batched read of user and account (and group distribution's
 * of users and their loads), and the check that a user can still take tickets
 * (in a distribution's transaction), and the account's admins (the email
 * sender tells them of a webhook switched off). Everything else about a
 * user's items stays behind this module's service.
 */
export { addApiKeyHashWrite, createOwnerWrites, deskAgentCheck, getUser as findUser, listAccountAdmins, reindexUsers, removeApiKeyHashWrite, userFromItem, userKey } from './repository.ts';
export type { UserRecord } from './repository.ts';
