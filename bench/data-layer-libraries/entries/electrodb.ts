/** Bundle-size entry: a handler that creates, gets and lists contacts through the electrodb variant (run.ts bundles it as infra/bundling.ts bundles a function). */
import { documentClient, type ContactRecord } from '../common.ts';
import { createElectro } from '../variants/electrodb.ts';

const { variant } = createElectro(documentClient(process.env.DYNAMODB_ENDPOINT ?? ''), process.env.TABLE_NAME ?? '');

export const handler = async (e: { contact: ContactRecord }) => {
  await variant.createContact(e.contact);
  return { got: await variant.getContact(e.contact.accountId, e.contact.id), page: await variant.listByName(e.contact.accountId, 25) };
};
