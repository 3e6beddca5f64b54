import { declareEntity } from '../declaration.ts';

export const attachmentEntities = {
  upload: declareEntity({
    personal: ['name'],
    type: 'upload',
    owner: 'attachments',
    description:
      'An upload (decisions §14): pending, expiring with its token (TTL), until one message attaches it in its own transaction; then the same item is the attachment (no TTL), found by the attachment id, which shares its suffix.',
    key: { pk: 'A#{accountId}', sk: 'UPLOAD#{id}' },
    expires: true,
  }),
};
