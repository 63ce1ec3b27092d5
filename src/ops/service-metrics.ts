import { Counter, Gauge, GaugeBy, Histogram, Registry } from './prometheus.js'

// The metrics the service records (requests, upstream calls, refusals, process memory) and the way its parts add
// their own, over one Prometheus registry.

type Refusal = 'rate_limited' | 'quota_exceeded' | 'key_quota_exceeded'

// Seconds. Completions can take minutes (STUDIO_UPSTREAM_TIMEOUT_MS defaults to 120 s), hence the long tail.
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

export interface Metrics {
  // One finished (or aborted: status 'aborted') request. route is the route pattern, 'unmatched' when none matched.
  request(route: string, status: number | 'aborted', seconds: number): void
  // Requests being handled right now: +1 when one starts, -1 when its response closes.
  inFlight(delta: 1 | -1): void
  // One upstream model call, by outcome (e.g. 'ok', 'error', 'timeout', 'unavailable'), with its latency.
  upstream(outcome: string, seconds: number): void
  // A priced completion's cost in micro-dollars, by the upstream model it was priced at and its key's prefix.
  spend(model: string, keyPrefix: string, micros: number): void
  // A request refused by the rate limit or the monthly quota.
  refused(reason: Refusal): void
  // A value read at every scrape.
  gauge(name: string, help: string, read: () => number): void
  // A value per label value, each of `values`, read at every scrape.
  gaugeBy(name: string, help: string, label: string, values: readonly string[], read: (value: string) => number): void
  // A counter without labels, shown from 0; returns the function that adds one.
  counter(name: string, help: string): () => void
  // A counter by one label, each of `values` shown from 0; returns the function that adds one for a value.
  counterBy(name: string, help: string, label: string, values: readonly string[]): (value: string) => void
  render(): string
}

export function createMetrics(): Metrics {
  const requests = new Counter(
    'studio_http_requests_total',
    'Requests answered, by route pattern and status ("aborted": the client left first).',
    ['route', 'status']
  )
  const duration = new Histogram(
    'studio_http_request_duration_seconds',
    'Time from the request reaching the handler until its response closed.',
    LATENCY_BUCKETS,
    ['route']
  )
  let active = 0
  const upstreamCalls = new Counter(
    'studio_upstream_requests_total',
    'Calls to the upstream model provider, by outcome.',
    ['outcome']
  )
  const upstreamDuration = new Histogram(
    'studio_upstream_duration_seconds',
    'Latency of calls to the upstream model provider, whatever their outcome.',
    LATENCY_BUCKETS
  )
  const spend = new Counter(
    'studio_spend_micro_usd_total',
    'Spend on completions in micro-dollars (USD x 10^-6, from the price table), by upstream model and key prefix; ' +
      'calls whose model has no price are not counted.',
    ['model', 'key_prefix']
  )
  const refusals = new Counter(
    'studio_refused_total',
    'Requests refused with 429, by reason: rate_limited (per-key rate limit), quota_exceeded (monthly plan quota) ' +
      "or key_quota_exceeded (a key's own monthly cap).",
    ['reason']
  )
  refusals.inc('rate_limited', undefined, 0)
  refusals.inc('quota_exceeded', undefined, 0)
  refusals.inc('key_quota_exceeded', undefined, 0)
  const registry = new Registry()
  registry.add(
    requests,
    duration,
    new Gauge('studio_http_requests_in_flight', 'Requests being handled now.', () => active),
    upstreamCalls,
    upstreamDuration,
    refusals,
    spend,
    new Gauge('process_resident_memory_bytes', 'Resident set size of the process.', () => process.memoryUsage.rss()),
    new Gauge('nodejs_heap_size_total_bytes', 'V8 heap size.', () => process.memoryUsage().heapTotal),
    new Gauge('nodejs_heap_size_used_bytes', 'V8 heap in use.', () => process.memoryUsage().heapUsed),
    new Gauge(
      'nodejs_external_memory_bytes',
      'Memory of C++ objects bound to JavaScript objects (buffers, the embedded database).',
      () => process.memoryUsage().external
    ),
    new Gauge('process_start_time_seconds', 'Start time of the process since the Unix epoch.', () =>
      Math.floor(performance.timeOrigin / 1000)
    )
  )
  return {
    request(route, status, seconds) {
      requests.inc(route, status)
      duration.observe(seconds, route)
    },
    inFlight(delta) {
      active += delta
    },
    upstream(outcome, seconds) {
      upstreamCalls.inc(outcome)
      upstreamDuration.observe(seconds)
    },
    refused(reason) {
      refusals.inc(reason)
    },
    spend(model, keyPrefix, micros) {
      spend.inc(model, keyPrefix, micros)
    },
    gauge(name, help, read) {
      registry.add(new Gauge(name, help, read))
    },
    gaugeBy(name, help, label, values, read) {
      registry.add(new GaugeBy(name, help, label, values, read))
    },
    counter(name, help) {
      const counter = new Counter(name, help)
      counter.inc(undefined, undefined, 0)
      registry.add(counter)
      return () => counter.inc()
    },
    counterBy(name, help, label, values) {
      const counter = new Counter(name, help, [label])
      for (const value of values) counter.inc(value, undefined, 0)
      registry.add(counter)
      return (value) => counter.inc(value)
    },
    render: () => registry.render(),
  }
}
