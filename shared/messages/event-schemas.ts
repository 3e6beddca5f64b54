import * as z from '../zod.ts';
import { domainEventDetail } from '../events/detail.ts';
import { MESSAGE_CREATED } from './events.ts';
import { MessageInEventSchema } from './resource.ts';

/**
 * The EventBridge `detail` of message.created (the name stays in events.ts,
 * which routing imports without the message model). `sendEmail` tells the
 * email sender whether a response is mailed.
 */
export const MessageCreatedDetailSchema = z.meta(
  domainEventDetail(MESSAGE_CREATED, z.object({ message: MessageInEventSchema, sendEmail: z.describe(z.boolean(), 'A response the email sender mails to the requester') })),
  { id: 'MessageCreatedEventDetail' },
);
