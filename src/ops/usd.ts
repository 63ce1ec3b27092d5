// Micro-dollars (10⁻⁶ USD, whole) as the USD decimal string the answers, views and CLI show: `1.234567`. A sum of
// them reaches here as PostgreSQL's numeric text, exact past 2⁵³.
export function usd(micros: number | string): string {
  const n = BigInt(micros)
  const sign = n < 0n ? '-' : ''
  const abs = n < 0n ? -n : n
  return `${sign}${abs / 1_000_000n}.${String(abs % 1_000_000n).padStart(6, '0')}`
}
