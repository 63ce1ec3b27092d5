// Durations on the command line: a whole number followed by s, m, h or d (`90d`, `24h`); a bare `0` is zero.
const UNIT = { s: 1, m: 60, h: 3600, d: 86_400 } as const
const SHAPE = /^(\d{1,9})([smhd])$/
const MAX_SECONDS = 100 * 365 * 86_400

// Seconds, or null when `text` is not a duration (or is longer than a hundred years).
export function parseDuration(text: string): number | null {
  if (text === '0') return 0
  const m = SHAPE.exec(text)
  if (!m) return null
  const seconds = Number(m[1]) * UNIT[m[2] as keyof typeof UNIT]
  return seconds <= MAX_SECONDS ? seconds : null
}
