import * as z from '../zod.ts';
import { USER_ROLES } from '../auth/principal.ts';
import { domainEventDetail } from '../events/detail.ts';

/** EventBridge source of user events; user.invited drives the invitation email. */
export const USER_EVENT_SOURCE = 'support-desk.users';
export const USER_INVITED = 'user.invited';

/** user.invited: POST /users with send_invitation; the invitee and who invited them. */
export const UserInvitedDetailSchema = domainEventDetail(
  USER_INVITED,
  z.object({ user: z.object({ id: z.string(), email: z.string(), name: z.string(), role: z.enum(USER_ROLES) }), invitedBy: z.string() }),
);
