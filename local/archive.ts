import { appendFile, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BusArchive } from './lambda/deployment.ts';
import { matchesPattern } from './lambda/patterns.ts';

/** An event as the bus wraps it (`{version, id, detail-type, source, account, time, region, resources, detail}`). */
export type BusEvent = Record<string, unknown> & { id: string; time: string; 'detail-type': string; source: string };

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;
const day = (d: Date) => d.toISOString().slice(0, 10);

/**
 * The local bus's archive (the template's AWS::Events::Archive), under
 * DATA_DIR/archive/<archive name>: one append-only JSON Lines file per UTC day
 * of arrival. An event is appended before PutEvents answers for it, so once
 * the publisher has its answer a crash of the stack loses nothing (the write
 * is with the operating system; a torn last line is skipped on reading). As in
 * EventBridge, it keeps the events its pattern matches, never an event a replay
 * sent again (those carry `replay-name`), and drops days past its retention.
 */
export class LocalArchive {
  readonly dir: string;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    root: string,
    readonly def: BusArchive,
  ) {
    this.dir = join(root, def.name);
    mkdirSync(this.dir, { recursive: true });
  }

  /** Does the archive keep this event? */
  keeps(event: Record<string, unknown>): boolean {
    return event['replay-name'] === undefined && matchesPattern(this.def.pattern, event);
  }

  /** Append events to today's file (writes are serialized, so lines never interleave); resolves once written. */
  append(events: readonly BusEvent[], now = new Date()): Promise<void> {
    if (!events.length) return Promise.resolve();
    const lines = events.map((e) => `${JSON.stringify(e)}\n`).join('');
    const write = this.writes.then(async () => {
      await mkdir(this.dir, { recursive: true });
      await appendFile(join(this.dir, `${day(now)}.jsonl`), lines);
    });
    this.writes = write.catch(() => undefined);
    return write;
  }

  /** The day files, oldest first. */
  private async days(): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    return names.filter((n) => DAY_FILE.test(n)).sort();
  }

  /**
   * Archived events whose time is in [from, to), in the order they arrived.
   * An event arrives at or after its time (a republish may come days later),
   * so the files from the day of `from` on hold every one of them.
   */
  async *read(from: Date, to: Date): AsyncGenerator<BusEvent> {
    await this.writes;
    for (const name of await this.days()) {
      if (name.slice(0, 10) < day(from)) continue;
      const text = await readFile(join(this.dir, name), 'utf8');
      for (const line of text.split('\n')) {
        if (!line) continue;
        let event: BusEvent;
        try {
          event = JSON.parse(line) as BusEvent;
        } catch {
          continue; // a line torn by a crash mid-write
        }
        const t = Date.parse(event.time);
        if (t >= from.getTime() && t < to.getTime()) yield event;
      }
    }
  }

  /** Drop the days older than the retention (EventBridge's RetentionDays; 0 keeps everything). */
  async prune(now = new Date()): Promise<string[]> {
    if (!this.def.retentionDays) return [];
    const oldest = day(new Date(now.getTime() - this.def.retentionDays * 86_400_000));
    const dropped = (await this.days()).filter((n) => n.slice(0, 10) < oldest);
    await Promise.all(dropped.map((n) => rm(join(this.dir, n), { force: true })));
    return dropped;
  }
}
