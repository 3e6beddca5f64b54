import { declareEntity } from '../declaration.ts';

export const idempotencyEntities = {
  idempotencyKey: declareEntity({
    personal: ['body'],
    type: 'idempotency',
    owner: 'idempotency',
    description:
      'An Idempotency-Key of an account (decisions §3), by SHA-256 of the key: the lock of the request that holds it (`state` running), then the first answer (`status`, gzip-compressed `body`) for 24 h.',
    key: { pk: 'A#{accountId}', sk: 'IDEMP#{keyHash}' },
    expires: true,
  }),
};
