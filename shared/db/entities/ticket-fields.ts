import { declareEntity } from '../declaration.ts';

export const ticketFieldEntities = {
  ticketField: declareEntity({
    personal: [],
    type: 'ticketField',
    owner: 'ticket-fields',
    description: 'A custom ticket field. Its `type` is stored as `fieldType` (`type` names the item kind throughout the table); optionCount moves with every option create and delete.',
    key: { pk: 'A#{accountId}', sk: 'TFIELD#{id}' },
    version: 'version',
    indexes: {
      byCreated: {
        slot: 'table',
        pk: 'A#{accountId}',
        sk: 'TFIELD#{id}',
        pattern: 'GET /ticket_fields sort_by=created_at (ids are time-ordered); every field of the account for ticket writes, SLA policy and automation checks',
      },
      byPosition: {
        slot: 'gsi1',
        pk: 'A#{accountId}#TFIELDS',
        sk: '{positionKey}#{id}',
        pattern: 'GET /ticket_fields sort_by=position (position zero-padded to 10 digits, so strings sort as numbers)',
      },
      byTitle: { slot: 'gsi2', pk: 'A#{accountId}#TFIELDS', sk: '{title:lower}\u0001{id}', pattern: 'GET /ticket_fields sort_by=title' },
    },
  }),
  ticketFieldKey: declareEntity({
    personal: [],
    type: 'ticketFieldKey',
    owner: 'ticket-fields',
    description: "Guard making a field's fieldKey unique per account (case-insensitive); names the field.",
    key: { pk: 'A#{accountId}', sk: 'TFIELDKEY#{fieldKey:lower}' },
  }),
  fieldPositionCounter: declareEntity({
    personal: [],
    type: 'fieldPositionCounter',
    owner: 'ticket-fields',
    description: 'Sequence (`seq`) of default positions for new custom fields; written only by ADD, so the item has no `type` attribute.',
    key: { pk: 'A#{accountId}', sk: 'COUNTER#TFIELDPOS' },
  }),
  fieldsStamp: declareEntity({
    personal: [],
    type: 'fieldsStamp',
    owner: 'ticket-fields',
    description:
      "The account's field-definitions stamp (`stamp`): moved by ADD in the transaction of every write of a field or its options, so the item has no `type` attribute. The authorizer reads it, consistently, into the request's context when its answers are cached; a function keeps an account's field definitions between requests while the stamp it is handed is the one it read them under.",
    key: { pk: 'A#{accountId}', sk: 'COUNTER#TFIELDSTAMP' },
  }),
  fieldOption: declareEntity({
    personal: [],
    type: 'fieldOption',
    owner: 'ticket-fields',
    description:
      'An option of a dropdown or multiselect field; usageCount moves in the transaction of every ticket write that starts or stops using it (an option in use cannot be deleted or change its value).',
    key: { pk: 'A#{accountId}', sk: 'TFOPT#{fieldId}#{id}' },
    indexes: {
      byField: {
        slot: 'table',
        pk: 'A#{accountId}',
        sk: 'TFOPT#{fieldId}#{id}',
        pattern: "GET /ticket_fields (each field's options), GET /ticket_fields/{id}/options; a deleted field's options for clean-up",
      },
    },
  }),
  fieldOptionValue: declareEntity({
    personal: [],
    type: 'fieldOptionValue',
    owner: 'ticket-fields',
    description: "Guard making an option's value unique within its field; names the option, so ticket writes and automation checks find options by value (BatchGetItem).",
    key: { pk: 'A#{accountId}', sk: 'TFOPTVAL#{fieldId}#{value}' },
  }),
};
