import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Function bundles kept between builds, one entry at a time, for both builders: `cdk synth`'s assets
 * (service-function.ts, through bundleFunction) and the local stack's (local/lambda/build.ts). A build is about
 * 0.5 s of CPU per function, 37 functions: CI's `cdk synth` and the test run's setup each built all of them, and
 * every `npm start` after an edit rebuilt every function, where the edit touched one or a few.
 *
 * A kept bundle is used again only when nothing its build read has changed: the same esbuild options, esbuild's
 * version and the bundler's own files (`options`), and every file esbuild read for that entry (its metafile's inputs,
 * the dependencies' files included) with the same content, compared by hash, never by size and time. A new import is
 * an edit of a file the last build read, so it is seen too. The ~1,500 files of all functions hash in about 40 ms.
 *
 * `SUPPORT_DESK_BUNDLE_CACHE=off` builds everything afresh (and keeps nothing): for a release build that must not
 * trust the folder, and for the test that compares the two builders (test/infra/bundles.test.ts).
 */

/** One entry's last build: the options it was made with, each input file's hash, and the folder holding it. */
interface Kept {
  options: string;
  inputs: Record<string, string>;
  dir: string;
}

/** The content hash of a file, or undefined when it is gone. */
function fileHash(file: string): string | undefined {
  try {
    return createHash('sha1').update(readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

export const bundleCacheEnabled = () => process.env.SUPPORT_DESK_BUNDLE_CACHE !== 'off';

/** A store of kept bundles (a folder under node_modules/.cache: build output, safe to delete). */
export class BundleStore {
  constructor(
    private readonly dir: string,
    /** Inputs are relative to this folder (esbuild's absWorkingDir). */
    private readonly root: string,
  ) {}

  private recordFile = (folder: string) => join(this.dir, `${folder}.json`);

  /**
   * The folder of `folder`'s kept bundle if it was built with `options` from files all unchanged since; else
   * undefined. A build of many entries passes one `checked` memo: most files are inputs of every entry (the SDK,
   * zod, the shared modules), and each is then looked at once.
   */
  find(folder: string, options: string, checked = new Map<string, string | undefined>()): string | undefined {
    if (!bundleCacheEnabled()) return undefined;
    let kept: Kept;
    try {
      kept = JSON.parse(readFileSync(this.recordFile(folder), 'utf8')) as Kept;
    } catch {
      return undefined;
    }
    if (kept.options !== options || !existsSync(kept.dir)) return undefined;
    const current = (file: string) => {
      if (!checked.has(file)) checked.set(file, fileHash(join(this.root, file)));
      return checked.get(file);
    };
    return Object.entries(kept.inputs).every(([file, hash]) => current(file) === hash) ? kept.dir : undefined;
  }

  /**
   * Keep a bundle: `write` fills a new folder of the store, then the record names it (written whole and renamed, so
   * a process reading at the same time sees the old record or the new). Answers the folder.
   */
  keep(folder: string, options: string, inputs: readonly string[], write: (dir: string) => void): string {
    mkdirSync(this.dir, { recursive: true });
    const dir = join(this.dir, `${folder}-${Date.now()}-${process.pid}`);
    write(dir);
    // Hashed after the build, as esbuild names its inputs only then: a file saved again while the build ran counts as
    // built until its next edit (as the local builder's size-and-time manifest before it).
    const hashed: Record<string, string> = {};
    for (const file of inputs) {
      const hash = fileHash(join(this.root, file));
      if (hash) hashed[file] = hash;
    }
    const tmp = `${this.recordFile(folder)}.${process.pid}`;
    writeFileSync(tmp, JSON.stringify({ options, inputs: hashed, dir } satisfies Kept));
    renameSync(tmp, this.recordFile(folder));
    this.prune(folder, dir);
    return dir;
  }

  /**
   * Older builds of `folder` go once no process can still be running them (a test run or `npm start` keeps its
   * files for as long as it runs): any but the one just kept that is older than a day.
   */
  private prune(folder: string, current: string): void {
    const prefix = `${folder}-`;
    for (const old of readdirSync(this.dir)) {
      if (!old.startsWith(prefix) || old.endsWith('.json') || join(this.dir, old) === current) continue;
      const madeAt = Number(old.slice(prefix.length).split('-')[0]);
      if (Number.isFinite(madeAt) && Date.now() - madeAt > 24 * 3600_000) rmSync(join(this.dir, old), { recursive: true, force: true });
    }
  }
}
