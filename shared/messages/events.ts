/** EventBridge source of message events; message.created feeds email sending and SLA work. */
export const MESSAGE_EVENT_SOURCE = 'support-desk.messages';
export const MESSAGE_CREATED = 'message.created';
