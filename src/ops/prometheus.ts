// A tiny Prometheus writer: counters and fixed-bucket histograms keyed by up to two label values (children are
// made once per label combination, so the hot path only does Map lookups and additions), and gauges read at
// scrape time, kept in a registry rendered in the text exposition format 0.0.4.

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

export class Counter implements Family {
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

export class Histogram implements Family {
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

export class Gauge implements Family {
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
export class GaugeBy implements Family {
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

// The families of one process, rendered in the order they were added.
export class Registry {
  private families: Family[] = []

  add(...families: Family[]) {
    this.families.push(...families)
  }

  render(): string {
    const out: string[] = []
    for (const f of this.families) f.render(out)
    return `${out.join('\n')}\n`
  }
}
