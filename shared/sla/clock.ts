/**
 * The SLA clock (decisions §10), as pure functions of instants in epoch
 * milliseconds. `calendarHours` counts every minute; `businessHours` counts
 * only minutes inside the account's schedule: local working intervals per
 * weekday in an IANA time zone, minus holidays (local dates). Each local day
 * is converted to UTC on its own, so a DST change moves that day's windows
 * and no other.
 */

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A local working interval, `HH:MM` to `HH:MM` (end after start; `24:00` ends at midnight). */
export interface WorkInterval {
  start: string;
  end: string;
}

export interface BusinessSchedule {
  timeZone: string;
  days: Record<Weekday, WorkInterval[]>;
  /** Local dates (YYYY-MM-DD) on which no minute counts. */
  holidays: string[];
}

export type Clock = { mode: 'calendarHours' } | { mode: 'businessHours'; schedule: BusinessSchedule };

const nineToFive = [{ start: '09:00', end: '17:00' }];
/** decisions §10: Monday to Friday, 09:00 to 17:00 UTC, unless the account sets its own. */
export const DEFAULT_SCHEDULE: BusinessSchedule = {
  timeZone: 'UTC',
  days: { sun: [], mon: nineToFive, tue: nineToFive, wed: nineToFive, thu: nineToFive, fri: nineToFive, sat: [] },
  holidays: [],
};

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** A schedule walk gives up after ten years of days (a schedule whose every working day is a holiday). */
const MAX_DAYS = 3660;

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Is this an IANA time zone the runtime knows? */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** Wall-clock fields of an instant in a time zone. */
function wallClock(timeZone: string, t: number) {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(t))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { y: parts.year, m: parts.month, d: parts.day, h: parts.hour, min: parts.minute, s: parts.second };
}

/** Local time minus UTC at an instant, in ms. */
function offsetAt(timeZone: string, t: number): number {
  const w = wallClock(timeZone, t);
  return Date.UTC(w.y, w.m - 1, w.d, w.h, w.min, w.s) - Math.floor(t / 1000) * 1000;
}

/**
 * The instant a local wall time names in a zone. The offset is looked up at
 * the guess and again at the result, so a day on which DST changes gets its
 * own offset; a time in a spring-forward gap lands just after the gap.
 */
export function zonedTimeToUtc(timeZone: string, y: number, m: number, d: number, minuteOfDay: number): number {
  const guess = Date.UTC(y, m - 1, d) + minuteOfDay * MINUTE;
  const first = offsetAt(timeZone, guess);
  const utc = guess - first;
  const second = offsetAt(timeZone, utc);
  return second === first ? utc : guess - second;
}

const minuteOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const isoDate = (y: number, m: number, d: number) => `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;

/** Working windows [start, end) in UTC ms, in order, from the local day that contains `from` onwards. */
function* windows(s: BusinessSchedule, from: number): Generator<[number, number]> {
  const holidays = new Set(s.holidays);
  const w = wallClock(s.timeZone, from);
  // Walk local calendar dates (UTC date arithmetic on the local y/m/d never skips or repeats a day).
  const firstDay = Date.UTC(w.y, w.m - 1, w.d) - DAY;
  for (let i = 0; i < MAX_DAYS; i++) {
    const day = new Date(firstDay + i * DAY);
    const [y, m, d] = [day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate()];
    if (holidays.has(isoDate(y, m, d))) continue;
    for (const iv of s.days[WEEKDAYS[day.getUTCDay()]] ?? []) {
      const start = zonedTimeToUtc(s.timeZone, y, m, d, minuteOf(iv.start));
      const end = zonedTimeToUtc(s.timeZone, y, m, d, minuteOf(iv.end));
      if (end > from && end > start) yield [start, end];
    }
  }
}

/** Clock minutes (fractional) that count between two instants. */
export function clockMinutesBetween(clock: Clock, from: number, to: number): number {
  if (to <= from) return 0;
  if (clock.mode === 'calendarHours') return (to - from) / MINUTE;
  let ms = 0;
  for (const [start, end] of windows(clock.schedule, from)) {
    if (start >= to) break;
    ms += Math.max(0, Math.min(end, to) - Math.max(start, from));
  }
  return ms / MINUTE;
}

/**
 * The instant at which `minutes` clock minutes have run from `from`: the
 * schedule is walked forward window by window. Null when the schedule has no
 * working minute left within ten years.
 */
export function addClockMinutes(clock: Clock, from: number, minutes: number): number | null {
  if (clock.mode === 'calendarHours') return from + minutes * MINUTE;
  let remaining = minutes * MINUTE;
  for (const [start, end] of windows(clock.schedule, from)) {
    const s = Math.max(start, from);
    if (s >= end) continue;
    if (remaining <= end - s) return s + remaining;
    remaining -= end - s;
  }
  return null;
}
