// Calendar months, UTC: the unit of the AI quota and of the usage report.
export interface Month {
  readonly month: string // YYYY-MM-01, as quota_usage.month
  readonly start: Date
  readonly end: Date // the start of the next month: when the quota resets
}

// The last month asked for: every completion asks a few times, nearly always for the same one.
let last: Month = compute(0)

function compute(time: number): Month {
  const d = new Date(time)
  const start = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1))
  const end = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1))
  return { month: start.toISOString().slice(0, 10), start, end }
}

export function monthOf(time: number): Month {
  if (time >= last.start.getTime() && time < last.end.getTime()) return last
  last = compute(time)
  return last
}
