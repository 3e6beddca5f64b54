import { appendFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalArchive, type BusEvent } from '../../local/archive.ts';

const root = mkdtempSync(join(tmpdir(), 'archive-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const def = (retentionDays = 30) => ({ logicalId: 'A', name: `archive-${n++}`, pattern: { source: ['support-desk.tickets'] }, retentionDays });
const event = (time: string, type = 'ticket.created', extra: Record<string, unknown> = {}): BusEvent => ({
  version: '0',
  id: `id-${time}-${type}`,
  'detail-type': type,
  source: 'support-desk.tickets',
  time,
  detail: { eventId: `evt_${time}` },
  ...extra,
});
const all = async (a: LocalArchive, from: string, to: string) => {
  const out: BusEvent[] = [];
  for await (const e of a.read(new Date(from), new Date(to))) out.push(e);
  return out;
};

describe('the local bus archive (DATA_DIR/archive)', () => {
  it('keeps what its pattern matches, never an event a replay sent again', () => {
    const a = new LocalArchive(root, def());
    expect(a.keeps(event('2025-01-01T00:00:00Z'))).toBe(true);
    expect(a.keeps({ ...event('2025-01-01T00:00:00Z'), source: 'support-desk.groups' })).toBe(false);
    expect(a.keeps(event('2025-01-01T00:00:00Z', 'ticket.created', { 'replay-name': 'r1' }))).toBe(false);
  });

  it('answers the events of [from, to) from the days they arrived, across a restart, skipping a line torn by a crash', async () => {
    const d = def();
    const a = new LocalArchive(root, d);
    await a.append([event('2025-03-01T10:00:00Z'), event('2025-03-01T10:00:05Z', 'ticket.resolved')], new Date('2025-03-01T10:00:06Z'));
    // A republish arrives two days after the change it carries.
    await a.append([event('2025-03-01T23:59:59Z', 'ticket.updated')], new Date('2025-03-03T08:00:00Z'));
    appendFileSync(join(a.dir, '2025-03-03.jsonl'), '{"version":"0","id":"torn"');
    // Another process (a restart) reads what the first appended.
    const again = new LocalArchive(root, d);
    expect((await all(again, '2025-03-01T00:00:00Z', '2025-03-02T00:00:00Z')).map((e) => e['detail-type'])).toEqual(['ticket.created', 'ticket.resolved', 'ticket.updated']);
    expect((await all(again, '2025-03-01T10:00:05Z', '2025-03-01T23:59:59Z')).map((e) => e['detail-type'])).toEqual(['ticket.resolved']);
    expect(await all(again, '2025-03-02T00:00:00Z', '2025-03-04T00:00:00Z')).toEqual([]);
  });

  it('appends concurrent writes whole, one line each', async () => {
    const a = new LocalArchive(root, def());
    const at = new Date('2025-04-01T00:00:00Z');
    await Promise.all(Array.from({ length: 50 }, (_, i) => a.append([event(`2025-04-01T00:00:${String(i).padStart(2, '0')}Z`, 'ticket.updated', { big: 'x'.repeat(100_000) })], at)));
    const got = await all(a, '2025-04-01T00:00:00Z', '2025-04-02T00:00:00Z');
    expect(got).toHaveLength(50);
    expect(got.every((e) => (e.big as string).length === 100_000)).toBe(true);
  });

  it('drops the days past its retention', async () => {
    const a = new LocalArchive(root, def(30));
    for (const day of ['2025-01-01', '2025-01-29', '2025-01-30']) writeFileSync(join(a.dir, `${day}.jsonl`), '');
    expect(await a.prune(new Date('2025-03-01T12:00:00Z'))).toEqual(['2025-01-01.jsonl', '2025-01-29.jsonl']);
    expect(readdirSync(a.dir)).toEqual(['2025-01-30.jsonl']);
    const forever = new LocalArchive(root, def(0));
    writeFileSync(join(forever.dir, '2000-01-01.jsonl'), '');
    expect(await forever.prune()).toEqual([]);
  });
});
