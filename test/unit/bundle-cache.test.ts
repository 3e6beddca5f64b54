import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BundleStore } from '../../infra/bundle-cache.ts';

/** A kept bundle is used again when, and only when, its options and every file its build read are unchanged. */
const root = mkdtempSync(join(tmpdir(), 'bundle-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => delete process.env.SUPPORT_DESK_BUNDLE_CACHE);

function project(name: string) {
  const dir = join(root, name);
  mkdirSync(join(dir, 'shared'), { recursive: true });
  writeFileSync(join(dir, 'entry.ts'), 'import "./shared/a.ts";');
  writeFileSync(join(dir, 'shared/a.ts'), 'export const a = 1;');
  const store = new BundleStore(join(dir, 'store'), dir);
  const keep = () =>
    store.keep('fn', 'options-1', ['entry.ts', 'shared/a.ts', '<define:x>'], (to) => {
      mkdirSync(to, { recursive: true });
      writeFileSync(join(to, 'index.mjs'), 'bundle');
    });
  return { dir, store, keep };
}

describe('the bundle store', () => {
  it('finds a kept bundle while its options and inputs are unchanged', () => {
    const { store, keep } = project('same');
    const kept = keep();
    expect(readFileSync(join(kept, 'index.mjs'), 'utf8')).toBe('bundle');
    expect(store.find('fn', 'options-1')).toBe(kept);
    expect(store.find('fn', 'options-2')).toBeUndefined();
    expect(store.find('other', 'options-1')).toBeUndefined();
  });

  it('compares content, not size and time: an edit of the same size with the old mtime is seen', () => {
    const { dir, store, keep } = project('edited');
    keep();
    const file = join(dir, 'shared/a.ts');
    const { atime, mtime } = statSync(file);
    writeFileSync(file, 'export const a = 2;');
    utimesSync(file, atime, mtime);
    expect(store.find('fn', 'options-1')).toBeUndefined();
  });

  it('misses when an input is gone, the kept folder is gone, or SUPPORT_DESK_BUNDLE_CACHE=off', () => {
    const gone = project('input-gone');
    gone.keep();
    rmSync(join(gone.dir, 'shared/a.ts'));
    expect(gone.store.find('fn', 'options-1')).toBeUndefined();

    const folder = project('folder-gone');
    rmSync(folder.keep(), { recursive: true });
    expect(folder.store.find('fn', 'options-1')).toBeUndefined();

    const off = project('off');
    off.keep();
    process.env.SUPPORT_DESK_BUNDLE_CACHE = 'off';
    expect(off.store.find('fn', 'options-1')).toBeUndefined();
  });

  it("removes an entry's builds older than a day when it keeps a new one, and no other entry's", () => {
    const { dir, keep } = project('prune');
    const old = join(dir, 'store', `fn-${Date.now() - 25 * 3600_000}-1`);
    const recent = join(dir, 'store', `fn-${Date.now() - 3600_000}-1`);
    const otherEntry = join(dir, 'store', `fn-other-${Date.now() - 25 * 3600_000}-1`);
    for (const d of [old, recent, otherEntry]) mkdirSync(d, { recursive: true });
    const kept = keep();
    expect([existsSync(old), existsSync(recent), existsSync(otherEntry), existsSync(kept)]).toEqual([false, true, true, true]);
  });
});
