/** EventBridge source of user events; user.invited drives the invitation email. */
export const USER_EVENT_SOURCE = 'support-desk.users';
export const USER_INVITED = 'user.invited';
