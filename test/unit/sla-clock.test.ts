import { describe, expect, it } from 'vitest';
import { addClockMinutes, clockMinutesBetween, DEFAULT_SCHEDULE, zonedTimeToUtc, type BusinessSchedule, type Clock } from '#shared/sla/clock.ts';

const t = (iso: string) => Date.parse(iso);
const out = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const calendar: Clock = { mode: 'calendarHours' };
const business = (s: Partial<BusinessSchedule> = {}): Clock => ({ mode: 'businessHours', schedule: { ...DEFAULT_SCHEDULE, ...s } });
const weekdays = (intervals: { start: string; end: string }[]) => ({ sun: [], mon: intervals, tue: intervals, wed: intervals, thu: intervals, fri: intervals, sat: [] });

// 2026-11-23 is a Monday.
describe('addClockMinutes: deadlines walk the schedule forward', () => {
  const cases: { name: string; clock: Clock; from: string; minutes: number; due: string | null }[] = [
    { name: 'calendar: every minute counts, nights and weekends too', clock: calendar, from: '2026-11-28T23:30:00.000Z', minutes: 90, due: '2026-11-29T01:00:00.000Z' },
    { name: 'calendar: a target longer than a week', clock: calendar, from: '2026-11-23T10:00:00.000Z', minutes: 8 * 24 * 60, due: '2026-12-01T10:00:00.000Z' },
    { name: 'business: inside the day', clock: business(), from: '2026-11-23T10:00:00.000Z', minutes: 60, due: '2026-11-23T11:00:00.000Z' },
    { name: 'business: an overnight start carries to the next morning', clock: business(), from: '2026-11-23T16:30:00.000Z', minutes: 60, due: '2026-11-24T09:30:00.000Z' },
    { name: 'business: a start before opening counts from 09:00', clock: business(), from: '2026-11-23T03:00:00.000Z', minutes: 1, due: '2026-11-23T09:01:00.000Z' },
    { name: 'business: a weekend start counts from Monday 09:00', clock: business(), from: '2026-11-28T12:00:00.000Z', minutes: 30, due: '2026-11-30T09:30:00.000Z' },
    { name: 'business: Friday afternoon runs over the weekend', clock: business(), from: '2026-11-27T16:00:00.000Z', minutes: 120, due: '2026-11-30T10:00:00.000Z' },
    { name: 'business: a deadline exactly at closing stays on that day', clock: business(), from: '2026-11-23T09:00:00.000Z', minutes: 480, due: '2026-11-23T17:00:00.000Z' },
    { name: 'business: a start exactly at closing counts from the next opening', clock: business(), from: '2026-11-23T17:00:00.000Z', minutes: 1, due: '2026-11-24T09:01:00.000Z' },
    { name: 'business: a start exactly at opening', clock: business(), from: '2026-11-23T09:00:00.000Z', minutes: 1, due: '2026-11-23T09:01:00.000Z' },
    { name: 'business: five working days end Friday 17:00', clock: business(), from: '2026-11-23T09:00:00.000Z', minutes: 5 * 480, due: '2026-11-27T17:00:00.000Z' },
    { name: 'business: a target longer than a week (ten working days and a minute)', clock: business(), from: '2026-11-23T09:00:00.000Z', minutes: 10 * 480 + 1, due: '2026-12-07T09:01:00.000Z' },
    { name: 'business: a holiday is skipped', clock: business({ holidays: ['2026-11-24'] }), from: '2026-11-23T16:00:00.000Z', minutes: 120, due: '2026-11-25T10:00:00.000Z' },
    {
      name: 'business: a start on a holiday counts from the next working day',
      clock: business({ holidays: ['2026-11-23'] }),
      from: '2026-11-23T10:00:00.000Z',
      minutes: 60,
      due: '2026-11-24T10:00:00.000Z',
    },
    {
      name: 'business: several intervals a day (lunch break skipped)',
      clock: business({
        days: weekdays([
          { start: '09:00', end: '12:00' },
          { start: '13:00', end: '17:00' },
        ]),
      }),
      from: '2026-11-23T11:30:00.000Z',
      minutes: 60,
      due: '2026-11-23T13:30:00.000Z',
    },
    {
      name: 'business: an interval up to midnight (24:00)',
      clock: business({ days: weekdays([{ start: '20:00', end: '24:00' }]) }),
      from: '2026-11-23T23:00:00.000Z',
      minutes: 90,
      due: '2026-11-24T20:30:00.000Z',
    },
    {
      name: 'time zone: local hours in Tokyo (UTC+9)',
      clock: business({ timeZone: 'Asia/Tokyo' }),
      from: '2026-11-23T07:30:00.000Z', // 16:30 in Tokyo
      minutes: 60,
      due: '2026-11-24T00:30:00.000Z', // 09:30 the next morning in Tokyo
    },
    {
      name: 'DST: New York springs forward on Sunday 2026-03-08; Monday opens at 09:00 EDT (13:00Z), Friday closed at 17:00 EST (22:00Z)',
      clock: business({ timeZone: 'America/New_York' }),
      from: '2026-03-06T21:00:00.000Z', // Fri 16:00 EST
      minutes: 120,
      due: '2026-03-09T14:00:00.000Z', // Mon 10:00 EDT
    },
    {
      name: 'DST: New York falls back on Sunday 2026-11-01; Monday opens at 09:00 EST (14:00Z)',
      clock: business({ timeZone: 'America/New_York' }),
      from: '2026-10-30T20:00:00.000Z', // Fri 16:00 EDT
      minutes: 90,
      due: '2026-11-02T14:30:00.000Z', // Mon 09:30 EST
    },
    {
      name: 'DST: Berlin, a Sunday-included schedule across the change day (2026-03-29)',
      clock: business({
        timeZone: 'Europe/Berlin',
        days: { sun: [{ start: '09:00', end: '10:00' }], mon: [{ start: '09:00', end: '10:00' }], tue: [], wed: [], thu: [], fri: [], sat: [{ start: '09:00', end: '10:00' }] },
      }),
      from: '2026-03-28T08:30:00.000Z', // Sat 09:30 CET
      minutes: 60,
      due: '2026-03-29T07:30:00.000Z', // Sun 09:30 CEST
    },
    {
      name: 'business: a schedule with no working minute never reaches the deadline',
      clock: business({ days: { sun: [], mon: [], tue: [], wed: [], thu: [], fri: [], sat: [] } }),
      from: '2026-11-23T09:00:00.000Z',
      minutes: 60,
      due: null,
    },
  ];
  it.each(cases)('$name', ({ clock, from, minutes, due }) => {
    expect(out(addClockMinutes(clock, t(from), minutes))).toBe(due);
  });
});

describe('clockMinutesBetween: minutes that count', () => {
  const cases: { name: string; clock: Clock; from: string; to: string; minutes: number }[] = [
    { name: 'calendar: wall time', clock: calendar, from: '2026-11-27T16:00:00.000Z', to: '2026-11-30T10:00:00.000Z', minutes: 66 * 60 },
    { name: 'business: Friday 16:00 to Monday 10:00 is two hours', clock: business(), from: '2026-11-27T16:00:00.000Z', to: '2026-11-30T10:00:00.000Z', minutes: 120 },
    { name: 'business: a whole weekend counts nothing', clock: business(), from: '2026-11-28T00:00:00.000Z', to: '2026-11-30T09:00:00.000Z', minutes: 0 },
    { name: 'business: a pause across days counts only open hours', clock: business(), from: '2026-11-23T15:00:00.000Z', to: '2026-11-25T11:00:00.000Z', minutes: 120 + 480 + 120 },
    { name: 'business: a holiday inside the range counts nothing', clock: business({ holidays: ['2026-11-24'] }), from: '2026-11-23T15:00:00.000Z', to: '2026-11-25T11:00:00.000Z', minutes: 240 },
    {
      name: 'business: the DST night (New York) is a normal 8-hour day either side',
      clock: business({ timeZone: 'America/New_York' }),
      from: '2026-03-06T14:00:00.000Z',
      to: '2026-03-09T22:00:00.000Z',
      minutes: 960,
    },
    { name: 'an empty or reversed range is zero', clock: business(), from: '2026-11-23T12:00:00.000Z', to: '2026-11-23T11:00:00.000Z', minutes: 0 },
  ];
  it.each(cases)('$name', ({ clock, from, to, minutes }) => {
    expect(clockMinutesBetween(clock, t(from), t(to))).toBe(minutes);
  });

  it('every business deadline is exactly its target in clock minutes from the start', () => {
    const clock = business({ timeZone: 'America/New_York', holidays: ['2026-03-10'] });
    for (const minutes of [1, 59, 480, 481, 2400, 5000]) {
      const from = t('2026-03-06T20:17:00.000Z');
      expect(clockMinutesBetween(clock, from, addClockMinutes(clock, from, minutes)!)).toBe(minutes);
    }
  });
});

describe('zonedTimeToUtc', () => {
  it('converts each local day with its own offset', () => {
    expect(out(zonedTimeToUtc('America/New_York', 2026, 3, 7, 9 * 60))).toBe('2026-03-07T14:00:00.000Z');
    expect(out(zonedTimeToUtc('America/New_York', 2026, 3, 8, 9 * 60))).toBe('2026-03-08T13:00:00.000Z');
    expect(out(zonedTimeToUtc('UTC', 2026, 12, 31, 24 * 60))).toBe('2027-01-01T00:00:00.000Z');
  });
});
