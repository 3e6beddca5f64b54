import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EntityDeclaration } from '#shared/db/declaration.ts';
import { ENTITIES } from '#shared/db/catalog.ts';

/**
 * docs/privacy.md against the entity declarations (decisions §23): every
 * entity says which of its attributes can hold personal data (`personal`,
 * empty when none), and the page names exactly the entities that hold some,
 * with exactly those attributes, and how each is erased or redacted.
 */
const doc = readFileSync(new URL('../../docs/privacy.md', import.meta.url), 'utf8');
const entities = Object.entries(ENTITIES) as [string, EntityDeclaration][];

/** The rows of the page's table of entities: entity -> its personal attributes. */
function documented(): Map<string, string[]> {
  const section = doc.slice(doc.indexOf('## The table (DynamoDB)'), doc.indexOf('## The bucket (S3)'));
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 5 || !/^[a-z][A-Za-z]*$/.test(cells[1]) || cells[1] === 'entity') continue;
    rows.set(
      cells[1],
      cells[2].split(',').map((a) => a.trim()),
    );
  }
  return rows;
}

describe('docs/privacy.md', () => {
  it('every entity declares which attributes can hold personal data (personal: [] when none)', () => {
    const undeclared = entities.filter(([, d]) => !Array.isArray(d.personal)).map(([name]) => name);
    expect(undeclared, 'add `personal: [...]` to these declarations (shared/db/entities) and, if any, a row to docs/privacy.md').toEqual([]);
  });

  it('names exactly the entities that hold personal data, with their attributes and how each is erased', () => {
    const holding = new Map(entities.filter(([, d]) => d.personal?.length).map(([name, d]) => [name, [...d.personal!].sort()]));
    const rows = documented();
    expect(new Map([...rows].map(([name, attrs]) => [name, [...attrs].sort()]))).toEqual(holding);
  });

  it('says what happens to every prefix of the bucket the code writes', async () => {
    const { objectKeys } = await import('#shared/attachments/model.ts');
    const { EMAIL_INBOUND } = await import('#app/topology.ts');
    for (const prefix of [objectKeys.attachmentPrefix, objectKeys.uploadPrefix, objectKeys.exportPrefix, EMAIL_INBOUND.objectPrefix, EMAIL_INBOUND.quarantinePrefix]) {
      expect(doc, `docs/privacy.md, "The bucket": ${prefix}`).toContain(`| \`${prefix}`);
    }
  });
});
