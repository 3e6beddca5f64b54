import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cachedSynthesis, sourcesDigest } from '../../local/lambda/template-cache.ts';

/** The local template is synthesized again when, and only when, what the synthesis reads has changed. */
const root = mkdtempSync(join(tmpdir(), 'template-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the local template cache', () => {
  it('takes a template made for the same settings from the cache, and synthesizes for new settings', async () => {
    const settings = { stage: 'local' };
    const cache = join(root, 'cache');
    let synthesized = 0;
    const synthesize = async () => ({ stackName: 'S', template: { Resources: { N: { Type: String(++synthesized) } } } });

    const first = await cachedSynthesis(settings, synthesize, cache);
    const again = await cachedSynthesis(settings, synthesize, cache);
    const other = await cachedSynthesis({ ...settings, stage: 'other' }, synthesize, cache);

    expect(first).toEqual({ stackName: 'S', template: { Resources: { N: { Type: '1' } } } });
    expect(again).toEqual(first);
    expect(other.template.Resources.N.Type).toBe('2');
    expect(synthesized).toBe(2);
  });

  it("changes its key with any file's content or name under the sources' folders, and with the CDK's version", () => {
    for (const dir of ['infra', 'app/openapi', 'shared/tickets', 'functions/api']) mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, 'package-lock.json'), '{"aws-cdk-lib":"2.1.0"}');
    writeFileSync(join(root, 'shared/tickets/model.ts'), 'export const a = 1;');
    const before = sourcesDigest(root);
    expect(sourcesDigest(root)).toBe(before);

    writeFileSync(join(root, 'shared/tickets/model.ts'), 'export const a = 2;');
    const edited = sourcesDigest(root);
    writeFileSync(join(root, 'functions/api/new.ts'), '');
    const added = sourcesDigest(root);
    writeFileSync(join(root, 'package-lock.json'), '{"aws-cdk-lib":"2.2.0"}');
    const upgraded = sourcesDigest(root);

    expect(new Set([before, edited, added, upgraded]).size).toBe(4);
  });
});
