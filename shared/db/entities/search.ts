import { declareEntity } from '../declaration.ts';

export const searchEntities = {
  searchWord: declareEntity({
    personal: ['word', 'w'],
    type: 'searchWord',
    owner: 'search',
    description:
      "One word of a user, contact, organization or ticket (decisions §13, §16), written in the record's transaction: `id`, the record's words `w` (for the other terms of a search), its sort keys `s` and filter values `f`. Partitioned by the word's first character so one account's index is not one hot partition; a term finds its matches with `begins_with`, by key. Words another word of the same record starts with are not stored (the longer word answers the same prefixes). A ticket's id words (`tkt_...` and its time part) have no items: the ticket's own key starts with its id, and a term that may start one reads the tickets by key (decisions §16).",
    key: { pk: 'A#{accountId}#W#{kind}#{initial}', sk: '{word}\u0001{id}' },
    indexes: {
      byPrefix: {
        slot: 'table',
        pk: 'A#{accountId}#W#{kind}#{initial}',
        sk: '{word}\u0001{id}',
        pattern: 'GET /contacts, /organizations, /v1/users, /v1/tickets with `search`: the records whose words start with the search term',
      },
    },
  }),
};
