import { declareEntity } from '../declaration.ts';

export const emailEntities = {
  emailSent: declareEntity({
    personal: [],
    type: 'emailSent',
    owner: 'email',
    description: "Marks an email (a message's, or `invite-<userId>`) as claimed (`state` = sending, `claimedAt`) and then sent or skipped, so a redelivered event does not send it twice.",
    key: { pk: 'A#{accountId}', sk: 'EMAILSENT#{id}' },
  }),
  emailSettings: declareEntity({
    personal: [],
    type: 'emailSettings',
    owner: 'email',
    description: "The account's email channel settings (decisions §17): support addresses and the sender's display name.",
    key: { pk: 'A#{accountId}', sk: 'EMAILSETTINGS' },
    version: 'version',
  }),
  mailId: declareEntity({
    personal: ['mailId', 'rawKey'],
    type: 'mailId',
    owner: 'email',
    description:
      'A Message-ID the account received or sent (`hash`: SHA-256 of the id without angle brackets), naming its ticket and message: threads a reply by In-Reply-To/References, and its conditional create makes a mail delivered twice one message.',
    key: { pk: 'A#{accountId}', sk: 'MAILID#{hash}' },
  }),
  mailThread: declareEntity({
    personal: ['mailIds'],
    type: 'mailThread',
    owner: 'email',
    description: "A ticket's mail thread: its reply token and the Message-IDs of its mail in order (the first and the latest, capped), for the References of the next response.",
    key: { pk: 'A#{accountId}', sk: 'MAILTHREAD#{ticketId}' },
    version: 'version',
  }),
  replyToken: declareEntity({
    personal: [],
    type: 'replyToken',
    owner: 'email',
    description: 'The reply address token `<account>+<token>@domain` of a ticket: threads a reply whose mail client dropped In-Reply-To and References.',
    key: { pk: 'A#{accountId}', sk: 'MAILTOKEN#{token}' },
  }),
  undeliverable: declareEntity({
    personal: ['email', 'detail'],
    type: 'undeliverable',
    owner: 'email',
    description: 'An address that hard-bounced or complained (SES notification): later responses to it are saved and not sent.',
    key: { pk: 'A#{accountId}', sk: 'UNDELIVERABLE#{email:lower}' },
  }),
};
