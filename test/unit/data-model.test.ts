import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENTITIES } from '#shared/db/catalog.ts';
import { template, type EntityDeclaration } from '#shared/db/declaration.ts';

const entities = Object.entries(ENTITIES) as [string, EntityDeclaration][];
import { DATA_MODEL_PATH, renderDataModel } from '../../scripts/data-model.ts';

describe('docs/data-model.md', () => {
  it('is generated from the entity declarations (run `npm run data-model` after changing one)', () => {
    expect(readFileSync(DATA_MODEL_PATH, 'utf8')).toBe(renderDataModel());
  });

  it('lists every declared entity and access pattern', () => {
    const doc = renderDataModel();
    for (const [name, d] of entities) {
      expect(doc).toContain(`| ${name} (\`type\``);
      for (const pattern of Object.keys(d.indexes ?? {})) expect(doc).toContain(`| ${name} | ${pattern} |`);
    }
  });
});

describe('key templates', () => {
  it('build keys from the record, formatting and leaving sparse slots out', () => {
    const t = template('A#{accountId}#ORGCONTACTS#{organizationId}');
    expect(t.build({ accountId: 'acc_1', organizationId: 'org_2' })).toBe('A#acc_1#ORGCONTACTS#org_2');
    expect(t.build({ accountId: 'acc_1', organizationId: null })).toBeUndefined();
    expect(template('{name:lower}\u0001{id}').build({ name: 'Ann LEE', id: 'c1' })).toBe('ann lee\u0001c1');
    expect(template('CONTACT#{id}').prefix).toBe('CONTACT#');
    // A query's prefix runs through the placeholders it is given, up to the first it is not.
    expect(template('TFOPT#{fieldId}#{id}').prefixOf({ fieldId: 'f1' })).toBe('TFOPT#f1#');
    expect(template('TFOPT#{fieldId}#{id}').prefixOf({})).toBe('TFOPT#');
  });

  it('refuse an unknown format', () => {
    expect(() => template('{x:upper}')).toThrow(/Unknown key format upper/);
  });

  it('take each GSI slot at most once per entity', () => {
    for (const [, d] of entities) {
      const slots = Object.values(d.indexes ?? {})
        .map((i) => i.slot)
        .filter((s) => s !== 'table');
      expect(new Set(slots).size).toBe(slots.length);
    }
  });
});
