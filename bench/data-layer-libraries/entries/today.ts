/** Bundle-size entry: a handler that creates, gets and lists contacts through the today variant (run.ts bundles it as infra/bundling.ts bundles a function). */
import { documentClient, type ContactRecord } from '../common.ts';
import { createToday } from '../variants/today.ts';

const { variant } = createToday(documentClient(process.env.DYNAMODB_ENDPOINT ?? ''), process.env.TABLE_NAME ?? '');

export const handler = async (e: { contact: ContactRecord }) => {
  await variant.createContact(e.contact);
  return { got: await variant.getContact(e.contact.accountId, e.contact.id), page: await variant.listByName(e.contact.accountId, 25) };
};
