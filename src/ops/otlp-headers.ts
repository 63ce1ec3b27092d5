import * as v from 'valibot'

// OTEL_EXPORTER_OTLP_HEADERS: `name=value` pairs, comma-separated, values percent-encoded (the OpenTelemetry form);
// null when it is not that.
const HEADER_PAIR = /^\s*([!#$%&'*+.^`|~\w-]+)\s*=([^,]*)$/
function headerPairs(s: string): Record<string, string> | null {
  const out: Record<string, string> = {}
  for (const pair of s.split(',')) {
    const m = HEADER_PAIR.exec(pair)
    if (!m) return null
    try {
      out[m[1]] = decodeURIComponent(m[2].trim())
    } catch {
      return null
    }
  }
  return out
}
export const otlpHeaders = v.pipe(
  v.string(),
  v.check((s) => headerPairs(s) !== null, 'must be name=value pairs separated by commas, values percent-encoded'),
  v.transform((s) => headerPairs(s) ?? {})
)
