import { declareEntity } from '../declaration.ts';

/** Bulk jobs (decisions §16): the request's tickets, changed in the background, and each one's result. */
export const jobEntities = {
  job: declareEntity({
    type: 'job',
    owner: 'jobs',
    description:
      "A bulk update or delete (POST /v1/tickets/bulk_update|bulk_delete): its distinct ticket ids in order, the change, the caller (`principal`) and the request's correlation id; each ticket's result once done (`results`, a list beside `ids`: positions, not ids, key what the job keeps, since an id is any string the caller sent) and the counts. Its `type` is stored as `jobType`. While a consumer runs a chunk it holds the lease (`leaseId`, `leaseUntil` in ms; 0 when free) and `claims` holds the version each of the chunk's tickets had before it, by position (0: not found), so a chunk cut short is resumed without changing a ticket twice. Expires 7 days after its creation.",
    key: { pk: 'A#{accountId}', sk: 'JOB#{id}' },
    expires: true,
  }),
};
