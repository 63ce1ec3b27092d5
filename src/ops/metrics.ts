// A tiny Prometheus registry: counters and fixed-bucket histograms keyed by up to two label values (children are
// made once per label combination, so the hot path only does Map lookups and additions), and gauges read at
// scrape time. Rendered in the text exposition format 0.0.4.

type LabelValue = string | number
const MAX_CHILDREN = 1000

const escapeLabel = (s: string) => s.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))
const labelText = (names: readonly string[], values: LabelValue[]) =>
  names.length ? `{${names.map((n, i) => `${n}="${escapeLabel(String(values[i]))}"`).join(',')}}` : ''
const num = (n: number) => (n === Infinity ? '+Inf' : Number.isNaN(n) ? 'NaN' : String(n))

interface Family {
  render(out: string[]): void
}

// Children by first and second label value. Past MAX_CHILDREN distinct combinations every new one shares a child
// labelled "other", so a label fed from an unexpected source cannot grow memory or the scrape without bound.
class Children<C> {
  private byFirst = new Map<LabelValue, Map<LabelValue, C>>()
  private size = 0
  readonly all: [string, C][] = []

  constructor(
    private names: readonly string[],
    private make: () => C
  ) {}

  get(a: LabelValue = '', b: LabelValue = ''): C {
    let inner = this.byFirst.get(a)
    const found = inner?.get(b)
    if (found) return found
    if (this.size >= MAX_CHILDREN && !(a === 'other' && b === 'other')) return this.get('other', 'other')
    const child = this.make()
    if (!inner) this.byFirst.set(a, (inner = new Map()))
    inner.set(b, child)
    this.size++
    this.all.push([labelText(this.names, [a, b]), child])
    return child
  }
}

function header(out: string[], name: string, help: string, type: string) {
  out.push(`# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${name} ${type}`)
}

class Counter implements Family {
  private children: Children<{ value: number }>
  constructor(
    readonly name: string,
    readonly help: string,
    labels: readonly string[] = []
  ) {
    this.children = new Children(labels, () => ({ value: 0 }))
  }
  inc(a?: LabelValue, b?: LabelValue, by = 1) {
    this.children.get(a, b).value += by
  }
  render(out: string[]) {
    header(out, this.name, this.help, 'counter')
    for (const [labels, c] of this.children.all) out.push(`${this.name}${labels} ${num(c.value)}`)
  }
}

interface HistogramChild {
  counts: Float64Array
  sum: number
  count: number
}

class Histogram implements Family {
  private children: Children<HistogramChild>
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
    labels: readonly string[] = []
  ) {
    this.children = new Children(labels, () => ({ counts: new Float64Array(buckets.length), sum: 0, count: 0 }))
  }
  observe(value: number, a?: LabelValue, b?: LabelValue) {
    const c = this.children.get(a, b)
    const buckets = this.buckets
    let i = 0
    while (i < buckets.length && value > buckets[i]) i++
    if (i < buckets.length) c.counts[i]++
    c.sum += value
    c.count++
  }
  render(out: string[]) {
    header(out, this.name, this.help, 'histogram')
    for (const [labels, c] of this.children.all) {
      const inner = labels ? `${labels.slice(1, -1)},` : ''
      let cumulative = 0
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += c.counts[i]
        out.push(`${this.name}_bucket{${inner}le="${num(this.buckets[i])}"} ${cumulative}`)
      }
      out.push(
        `${this.name}_bucket{${inner}le="+Inf"} ${c.count}`,
        `${this.name}_sum${labels} ${num(c.sum)}`,
        `${this.name}_count${labels} ${c.count}`
      )
    }
  }
}

class Gauge implements Family {
  constructor(
    readonly name: string,
    readonly help: string,
    private read: () => number
  ) {}
  render(out: string[]) {
    header(out, this.name, this.help, 'gauge')
    out.push(`${this.name} ${num(this.read())}`)
  }
}

// A gauge by one label, each of a fixed set of values read at scrape time.
class GaugeBy implements Family {
  constructor(
    readonly name: string,
    readonly help: string,
    private label: string,
    private values: readonly string[],
    private read: (value: string) => number
  ) {}
  render(out: string[]) {
    header(out, this.name, this.help, 'gauge')
    for (const v of this.values) out.push(`${this.name}${labelText([this.label], [v])} ${num(this.read(v))}`)
  }
}

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
  const refusals = new Counter(
    'studio_refused_total',
    'Requests refused with 429, by reason: rate_limited (per-key rate limit), quota_exceeded (monthly plan quota) ' +
      "or key_quota_exceeded (a key's own monthly cap).",
    ['reason']
  )
  refusals.inc('rate_limited', undefined, 0)
  refusals.inc('quota_exceeded', undefined, 0)
  refusals.inc('key_quota_exceeded', undefined, 0)
  const families: Family[] = [
    requests,
    duration,
    new Gauge('studio_http_requests_in_flight', 'Requests being handled now.', () => active),
    upstreamCalls,
    upstreamDuration,
    refusals,
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
    ),
  ]
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
    gauge(name, help, read) {
      families.push(new Gauge(name, help, read))
    },
    gaugeBy(name, help, label, values, read) {
      families.push(new GaugeBy(name, help, label, values, read))
    },
    counter(name, help) {
      const counter = new Counter(name, help)
      counter.inc(undefined, undefined, 0)
      families.push(counter)
      return () => counter.inc()
    },
    counterBy(name, help, label, values) {
      const counter = new Counter(name, help, [label])
      for (const value of values) counter.inc(value, undefined, 0)
      families.push(counter)
      return (value) => counter.inc(value)
    },
    render() {
      const out: string[] = []
      for (const f of families) f.render(out)
      return `${out.join('\n')}\n`
    },
  }
}
