import { declareEntity } from '../declaration.ts';

/** Jobs (decisions §16, §20): a request's items (ticket ids), done in the background by the job type's executor, and each one's result. */
export const jobEntities = {
  job: declareEntity({
    personal: ['input'],
    type: 'job',
    owner: 'jobs',
    description:
      "A job (a bulk update or delete, POST /v1/tickets/bulk_update|bulk_delete; a merge): its distinct items (ticket ids) in order, what its executor applies to each (`input`, stored as `change`: a bulk update's change, null when there is nothing beside the ids), the caller (`principal`) and the request's correlation id; each item's result once done (`results`, a list beside `ids`: positions, not ids, key what the job keeps, since an id is any string the caller sent) and the counts. Its `type` is stored as `jobType`. While a consumer runs a chunk it holds the lease (`leaseId`, `leaseUntil` in ms; 0 when free) and `claims` holds what the type's executor read of each of the chunk's items before it ran, by position (bulk: the ticket's version, 0: not found), so a chunk cut short is resumed without doing an item twice. Expires 7 days after its creation.",
    key: { pk: 'A#{accountId}', sk: 'JOB#{id}' },
    expires: true,
  }),
};
