import { InboundEventSchema } from '#shared/email/ses-events.ts';

/** Placeholder while the inbound service is written (issue 29): parses the event and does nothing else yet. */
export const handler = async (event: unknown): Promise<void> => {
  InboundEventSchema.parse(event);
};
