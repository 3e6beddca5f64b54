import { declareEntity } from '../declaration.ts';

export const emailEntities = {
  emailSent: declareEntity({
    type: 'emailSent',
    owner: 'email',
    description: "Marks an email (a message's, or `invite-<userId>`) as claimed (`state` = sending, `claimedAt`) and then sent or skipped, so a redelivered event does not send it twice.",
    key: { pk: 'A#{accountId}', sk: 'EMAILSENT#{id}' },
  }),
};
