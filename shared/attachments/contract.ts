import { defineRoutes } from '../http/contract.ts';
import { dataEnvelope } from '../pagination/numbered.ts';
import { AttachmentParamsSchema, AttachmentSchema, CreateUploadBodySchema, UploadSchema } from './model.ts';

/**
 * Uploads and message attachments (decisions §14), served by the messages
 * function: the only function that reads and writes the bucket.
 */
export const attachmentRoutes = defineRoutes([
  {
    operationId: 'createUpload',
    method: 'POST',
    path: '/helpdesk/api/uploads',
    group: 'messages',
    summary: 'Start an upload',
    description:
      'Answers a token and an S3 presigned PUT URL, valid 15 minutes: send the bytes there (exactly size bytes, with exactly uploadHeaders), never through this API. ' +
      'Then attach the token to one message (POST /messages attachments: [{token}]) within 24 hours. A token never attached expires; its object is deleted after about a day.',
    access: 'agent',
    body: CreateUploadBodySchema,
    success: { status: 201, description: 'The token and where to upload', schema: dataEnvelope(UploadSchema, 'UploadResponse') },
    errors: [403, 409, 422],
  },
  {
    operationId: 'getAttachment',
    method: 'GET',
    path: '/helpdesk/api/attachments/{attachmentId}',
    group: 'messages',
    summary: 'Get an attachment',
    description: "The attachment as messages carry it, with a fresh presigned download URL (15 minutes). Another account's attachment is 404.",
    access: 'viewer',
    params: AttachmentParamsSchema,
    success: { status: 200, description: 'The attachment', schema: dataEnvelope(AttachmentSchema, 'AttachmentResponse') },
    errors: [403, 404],
  },
]);
