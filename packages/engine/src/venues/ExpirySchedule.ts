import {
  compareExpiry,
  EXPIRY_HOUR_UTC,
  type Expiry,
  expiryOfDate,
  expiryTimestamp,
  MAX_EXPIRY_YEAR,
  MIN_EXPIRY_YEAR
} from "../domain/Instrument.js"

/**
 * Which expiries the venues list, relative to the current time. Everything expires at 08:00 UTC,
 * so the listing changes only at 08:00 UTC: the catalog is a function of the last 08:00 UTC at or
 * before now (`catalogStart`), and an expiry is live while it is strictly after that instant.
 */

export const MS_PER_DAY = 86_400_000
const ROLL_OFFSET_MS = EXPIRY_HOUR_UTC * 3_600_000
const FRIDAY = 5

export const DAILY_COUNT = 3
export const WEEKLY_COUNT = 4
export const MONTHLY_COUNT = 3
export const QUARTERLY_COUNT = 4
/** Quarterly expiries: the last Friday of these months. */
export const QUARTER_MONTHS: ReadonlyArray<number> = [3, 6, 9, 12]

/** The last 08:00 UTC at or before `now`: the instant the current listing took effect. */
export const catalogStart = (now: number): number =>
  Math.floor((now - ROLL_OFFSET_MS) / MS_PER_DAY) * MS_PER_DAY + ROLL_OFFSET_MS

/** Names can only write years 2000–2099; anything else cannot be listed. */
export const isNameable = (e: Expiry): boolean => e.year >= MIN_EXPIRY_YEAR && e.year <= MAX_EXPIRY_YEAR

const isFriday = (e: Expiry): boolean => new Date(Date.UTC(e.year, e.month - 1, e.day)).getUTCDay() === FRIDAY

/** The last Friday of a month (month 1–12). */
export const lastFridayOf = (year: number, month: number): Expiry => {
  const last = new Date(Date.UTC(year, month, 0))
  const back = (last.getUTCDay() - FRIDAY + 7) % 7
  return { year, month, day: last.getUTCDate() - back }
}

export const isLastFridayOfMonth = (e: Expiry): boolean => {
  const last = lastFridayOf(e.year, e.month)
  return last.day === e.day
}

export const isQuarterlyExpiry = (e: Expiry): boolean =>
  QUARTER_MONTHS.includes(e.month) && isLastFridayOfMonth(e)

/** Last Fridays after `start`, month by month, keeping those `keep` accepts, the first `count`. */
const lastFridaysAfter = (start: number, count: number, keep: (month: number) => boolean): Array<Expiry> => {
  const first = new Date(start)
  const out: Array<Expiry> = []
  for (let i = 0; out.length < count; i++) {
    const month0 = first.getUTCMonth() + i
    const e = lastFridayOf(first.getUTCFullYear() + Math.floor(month0 / 12), (month0 % 12) + 1)
    if (keep(e.month) && expiryTimestamp(e) > start) out.push(e)
  }
  return out
}

export interface ListedExpiries {
  readonly dailies: ReadonlyArray<Expiry>
  readonly weeklies: ReadonlyArray<Expiry>
  readonly monthlies: ReadonlyArray<Expiry>
  readonly quarterlies: ReadonlyArray<Expiry>
  /** Option expiries: all of the above, ascending, each once. */
  readonly options: ReadonlyArray<Expiry>
  /** Future expiries: monthlies and quarterlies, ascending, each once. */
  readonly futures: ReadonlyArray<Expiry>
}

const uniqueSorted = (lists: ReadonlyArray<ReadonlyArray<Expiry>>): ReadonlyArray<Expiry> => {
  const byKey = new Map<number, Expiry>()
  for (const list of lists) for (const e of list) byKey.set(expiryTimestamp(e), e)
  return [...byKey.values()].sort(compareExpiry)
}

/** The expiries listed at `now`: the next 3 days, 4 Fridays, 3 month-ends and 4 quarter-ends. */
export const listedExpiries = (now: number): ListedExpiries => {
  const start = catalogStart(now)
  const dailies = Array.from({ length: DAILY_COUNT }, (_, i) =>
    expiryOfDate(new Date(start + (i + 1) * MS_PER_DAY))
  )
  const weeklies: Array<Expiry> = []
  for (let t = start + MS_PER_DAY; weeklies.length < WEEKLY_COUNT; t += MS_PER_DAY) {
    const e = expiryOfDate(new Date(t))
    if (isFriday(e)) weeklies.push(e)
  }
  const monthlies = lastFridaysAfter(start, MONTHLY_COUNT, () => true)
  const quarterlies = lastFridaysAfter(start, QUARTERLY_COUNT, (m) => QUARTER_MONTHS.includes(m))
  const nameable = (es: ReadonlyArray<Expiry>) => es.filter(isNameable)
  return {
    dailies: nameable(dailies),
    weeklies: nameable(weeklies),
    monthlies: nameable(monthlies),
    quarterlies: nameable(quarterlies),
    options: uniqueSorted([dailies, weeklies, monthlies, quarterlies].map(nameable)),
    futures: uniqueSorted([monthlies, quarterlies].map(nameable))
  }
}

/** Whether an expiry is still live at `now` (strictly after the current catalog start). */
export const isLive = (e: Expiry, now: number): boolean => expiryTimestamp(e) > catalogStart(now)
