import { declareEntity } from '../declaration.ts';

export const webhookEntities = {
  webhook: declareEntity({
    personal: [],
    type: 'webhook',
    owner: 'webhooks',
    description: 'A webhook: target URL, subscribed events, active flag and its signing secret.',
    key: { pk: 'A#{accountId}', sk: 'WEBHOOK#{id}' },
    version: 'version',
    indexes: {
      byAccount: {
        slot: 'table',
        pk: 'A#{accountId}',
        sk: 'WEBHOOK#{id}',
        pattern: "GET /v1/webhooks; the fan-out of every ticket event to the account's webhooks (at most 100: one Query, oldest first)",
      },
    },
  }),
  webhookCount: declareEntity({
    personal: [],
    type: 'counter',
    owner: 'webhooks',
    description: 'How many webhooks the account has (`count`), moved in the transaction of each create (only while under 100, decisions §7) and delete.',
    key: { pk: 'A#{accountId}', sk: 'COUNTER#WEBHOOKS' },
  }),
  webhookDelivery: declareEntity({
    personal: ['body'],
    type: 'webhookDelivery',
    owner: 'webhooks',
    description:
      'One event sent to one webhook (its id derives from the event id, so a redelivered event finds it): state, attempt counters, retry cycle and the exact body every attempt sends. Kept 30 days.',
    key: { pk: 'A#{accountId}', sk: 'WHDLV#{webhookId}#{deliveryId}' },
    expires: true,
  }),
  webhookAttempt: declareEntity({
    personal: [],
    type: 'webhookAttempt',
    owner: 'webhooks',
    description: 'One delivery attempt (the delivery log): status or error, duration, outcome and next attempt. Kept 30 days.',
    key: { pk: 'A#{accountId}', sk: 'WHATT#{webhookId}#{attemptId}' },
    expires: true,
    indexes: {
      byWebhook: { slot: 'table', pk: 'A#{accountId}', sk: 'WHATT#{webhookId}#{attemptId}', pattern: 'GET /v1/webhooks/:id/deliveries: newest attempts first (attempt ids are time-ordered)' },
    },
  }),
};
