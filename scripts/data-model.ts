/**
 * docs/data-model.md is generated from the entity catalog (shared/db/catalog.ts
 * ENTITIES): `npm run data-model` writes it, and test/unit/data-model.test.ts
 * fails when the file and the declarations differ.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EntityDeclaration } from '../shared/db/declaration.ts';
import { ENTITIES } from '../shared/db/catalog.ts';
import { ALL_GSIS, OUTBOX_INDEX, gsiKeys, type GsiName } from '../shared/db/table-definition.ts';

export const DATA_MODEL_PATH = fileURLToPath(new URL('../docs/data-model.md', import.meta.url));

const code = (s: string) => `\`${s.replace(/\u0001/g, '\\u0001').replace(/\|/g, '\\|')}\``;
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function slotName(slot: string) {
  if (slot === 'table') return 'table';
  if (slot === OUTBOX_INDEX.name) return `${slot} (${OUTBOX_INDEX.partitionKey}/${OUTBOX_INDEX.sortKey})`;
  const k = gsiKeys(slot as GsiName);
  return `${slot} (${k.partitionKey}/${k.sortKey}, ${ALL_GSIS.find((g) => g.name === slot)?.projection === 'KEYS_ONLY' ? 'keys only' : 'all attributes'})`;
}

/** The design decisions behind the declarations (hand-written; the tables after them are generated). */
const NOTES = `## Search and list views (decisions §13)

**Search** reads a word index, not the list. Each user, contact and organization has one small \`searchWord\` item per word (decisions §13's words: name words, the parts of the email or domain, its local part and domain, the whole address), written in the same transaction as the record. Words that another word of the same record starts with are not stored: the longer word answers the same prefixes (\`john\` is covered by \`john.smith@acme.example\`). A search reads the items of its longest term with \`begins_with\` on the sort key, checks the other terms and the filters on the words and values each item carries, and sorts the matches by the sort keys the item carries; then it reads the page's records by key (one BatchGetItem). The work is the matches of one term plus the page, whatever the account holds; totals are exact up to 10,000 matches. Past 10,000 matches of the term, the list is walked in its own order with the search as a filter (\`searchText\`), bounded per request, and the total is a lower bound. The partition is the account, the kind and the word's first character, so one account's writes spread over many partitions.

Write amplification: a contact \`Ann Lee <ann.lee@acme.example>\` stores 4 words (\`ann.lee@acme.example\`, \`lee\`, \`acme.example\`, \`example\`): creating it writes 7 items (contact, email guard, list counter, 4 words) plus its organization's counter when linked. An update that changes neither the name, the email nor the sort keys writes no word item; a rename rewrites the record's words (puts) and deletes the ones it lost. Users also carry their role and status as filter values, so a role change rewrites their words.

**Ticket views.** A list filtered by \`status\`, \`priority\`, \`assignee_id\` or \`status\` with \`assignee_id\`, sorted by creation or update, is a key-condition query. Tickets occupy two partition families in four keys-only GSIs: (status, priority) and (assignee, status), each sorted by id (creation order; ids are time-ordered) and by \`updatedAt#id\`. A filter reads the partitions it spans merged in the requested order: \`status\` spans 4 (one per priority), \`priority\` 5 (one per status), \`assignee_id\` 5, \`status\`+\`assignee_id\` or \`status\`+\`priority\` 1. Each partition is read for page_size + 1 keys after the cursor's position and the page's tickets are then read by key: at most partitions × (page_size + 1) keys and page_size tickets, whatever the account holds; the cursor is the last sort key. Keys-only projection means a ticket write moves a created-order entry only when status, priority or assignee change, and the indexes store no second copy of tickets. The partitions spread one account's hot writes over its statuses, priorities and agents instead of one \`#TICKETS\` partition. Sorting by status or priority, and other filter combinations (e.g. assignee with priority), walk the list with a filter, bounded per request (READ_BUDGET).

**Deep pages.** A page-number list reads its offset plus its page (the store cannot skip): cursors (the v1 lists, users) are the scalable path. A search ranks its matches once per request, so any page of a search costs the same. A page beyond the last answers an empty page with the right \`meta\`.

**Existing data.** \`npm run admin -- reindex --account ID\` (or \`--all\`; \`--background\` to run it one page per message on the \`reindex\` queue) writes the words and view keys of records written before them. Each write holds only if the record is unchanged (a changed record was indexed by its change), so it is idempotent and can be re-run or resumed at any time. On an existing deployment, CloudFormation adds one GSI per update: set the stage's \`viewIndexes\` to 1, 2, 3, then 4 (one deploy each; infra/config.ts), then reindex. Until a view's index exists, its lists read as before (the bounded filter walk).
`;

export function renderDataModel(): string {
  const entities = Object.entries(ENTITIES) as [string, EntityDeclaration][];
  const lines: string[] = [
    '# Data model',
    '',
    '<!-- Generated from shared/db/catalog.ts (ENTITIES) by `npm run data-model`; test/unit/data-model.test.ts keeps it equal. Do not edit by hand. -->',
    '',
    'One DynamoDB table (`pk`/`sk`), eight overloaded GSIs (each `gsiNpk`/`gsiNsk`: `gsi1`..`gsi4` project all attributes, `gsi5`..`gsi8` only the keys) and the outbox index (keys only). Every account-scoped item lives under `A#<accountId>`, so a request can only address its own tenant. Each entity below is declared once in `shared/db/entities/<module>.ts`; its repository binds it to the domain record (`shared/db/entity.ts`), and only its owning module reads or writes its items.',
    '',
    'Placeholders: `{field}` is the record\'s value; `{field:lower}` is lower-cased (case-insensitive order and uniqueness). `\\u0001` sorts below every character a name may hold, so "ann" sorts before "ann lee". An index slot is written only when all its placeholders have values (sparse indexes).',
    '',
    NOTES,
    '## Entities',
    '',
    '| entity | owner | pk | sk | what it is |',
    '|---|---|---|---|---|',
  ];
  for (const [name, d] of entities)
    lines.push(
      `| ${name} (\`type\` = \`${d.type}\`) | ${d.owner} | ${code(d.key.pk)} | ${code(d.key.sk)} | ${cell(d.description)}${d.version ? ` Optimistic lock: \`${d.version}\`.` : ''}${d.expires ? ' Expires (TTL).' : ''} |`,
    );
  lines.push('', '## Access patterns', '', '| entity | pattern | slot | partition key | sort key | read by |', '|---|---|---|---|---|---|');
  for (const [name, d] of entities) {
    for (const [pattern, i] of Object.entries(d.indexes ?? {})) lines.push(`| ${name} | ${pattern} | ${slotName(i.slot)} | ${code(i.pk)} | ${code(i.sk)} | ${cell(i.pattern)} |`);
  }
  lines.push('', '## Index slots', '', 'Which entities occupy each GSI (a slot is taken at most once per entity).', '', '| slot | entities (pattern) |', '|---|---|');
  const slots = [...ALL_GSIS.map((g) => g.name), OUTBOX_INDEX.name] as string[];
  for (const slot of slots) {
    const users = entities.flatMap(([name, d]) =>
      Object.entries(d.indexes ?? {})
        .filter(([, i]) => i.slot === slot)
        .map(([p]) => `${name}.${p}`),
    );
    lines.push(`| ${slotName(slot)} | ${users.join(', ') || '(free)'} |`);
  }
  lines.push('');
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(DATA_MODEL_PATH, renderDataModel());
  console.log(`wrote ${DATA_MODEL_PATH}`);
}
