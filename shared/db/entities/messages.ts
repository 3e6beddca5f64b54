import { declareEntity } from '../declaration.ts';

/** Messages never change, so each is stored twice in one transaction (by id, and under its ticket) and the copies cannot drift; a merge moves both in one transaction (decisions §20). */
export const messageEntities = {
  message: declareEntity({
    personal: ['content', 'textContent', 'authorId', 'attachments', 'ccs', 'recipients', 'emailDelivery'],
    type: 'message',
    owner: 'messages',
    description: 'A message, found by id (GET /v1/messages/:id). Its `type` field is stored as `messageType`; attachments carry their object keys.',
    key: { pk: 'A#{accountId}', sk: 'MESSAGE#{id}' },
  }),
  ticketMessage: declareEntity({
    personal: ['content', 'textContent', 'authorId', 'attachments', 'ccs', 'recipients', 'emailDelivery'],
    type: 'message',
    owner: 'messages',
    description: "The same message under its ticket (written in the message's transaction): a ticket's messages in time order.",
    key: { pk: 'A#{accountId}', sk: 'TMSG#{ticketId}#{id}' },
    indexes: {
      byTicket: {
        slot: 'table',
        pk: 'A#{accountId}',
        sk: 'TMSG#{ticketId}#{id}',
        pattern: "GET /v1/messages?ticket_id=… (ids are time-ordered; total from the TMSG#<ticketId> list counter); clearing a deleted ticket's messages",
      },
    },
  }),
};
