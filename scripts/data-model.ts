/**
 * docs/data-model.md is generated from the entity catalog (shared/db/keys.ts
 * ENTITIES): `npm run data-model` writes it, and test/unit/data-model.test.ts
 * fails when the file and the declarations differ.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EntityDeclaration } from '../shared/db/declaration.ts';
import { ENTITIES } from '../shared/db/keys.ts';
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

export function renderDataModel(): string {
  const entities = Object.entries(ENTITIES) as [string, EntityDeclaration][];
  const lines: string[] = [
    '# Data model',
    '',
    '<!-- Generated from shared/db/keys.ts (ENTITIES) by `npm run data-model`; test/unit/data-model.test.ts keeps it equal. Do not edit by hand. -->',
    '',
    'One DynamoDB table (`pk`/`sk`), eight overloaded GSIs (each `gsiNpk`/`gsiNsk`: `gsi1`..`gsi4` project all attributes, `gsi5`..`gsi8` only the keys) and the outbox index (keys only). Every account-scoped item lives under `A#<accountId>`, so a request can only address its own tenant. Each entity below is declared once in `shared/db/entities/<module>.ts`; its repository binds it to the domain record (`shared/db/entity.ts`), and only its owning module reads or writes its items.',
    '',
    'Placeholders: `{field}` is the record\'s value; `{field:lower}` is lower-cased (case-insensitive order and uniqueness). `\\u0001` sorts below every character a name may hold, so "ann" sorts before "ann lee". An index slot is written only when all its placeholders have values (sparse indexes).',
    '',
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
