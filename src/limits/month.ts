// Calendar months, UTC: the unit of the AI quota and of the usage report.
export interface Month {
  month: string // YYYY-MM-01, as quota_usage.month
  start: Date
  end: Date // the start of the next month: when the quota resets
}

export function monthOf(time: number): Month {
  const d = new Date(time)
  const start = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1))
  const end = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1))
  return { month: start.toISOString().slice(0, 10), start, end }
}
