import { ApiError } from './errors.js'

type Params = Record<string, string>

interface Entry<R> {
  pattern: RegExp
  keys: string[]
  methods: Map<string, R>
}

export type Match<R> = { route: R; params: Params } | { allow: string[] } | null

// Exact paths live in a plain object; paths with `:name` segments in a list tried in order.
export class Router<R> {
  private exact: Record<string, Map<string, R>> = Object.create(null)
  private patterns: Entry<R>[] = []

  add(method: string, path: string, route: R) {
    if (!path.includes(':')) {
      ;(this.exact[path] ??= new Map()).set(method, route)
      return this
    }
    const keys: string[] = []
    const source = path.replace(/:(\w+)/g, (_, k: string) => {
      keys.push(k)
      return '([^/]+)'
    })
    // RegExp.source escapes '/', so two methods of one path are matched on the compiled source.
    const pattern = new RegExp(`^${source}$`)
    let entry = this.patterns.find((e) => e.pattern.source === pattern.source)
    if (!entry) this.patterns.push((entry = { pattern, keys, methods: new Map() }))
    entry.methods.set(method, route)
    return this
  }

  find(method: string, path: string): Match<R> {
    const methods = this.exact[path]
    if (methods) return pick(methods, method, {})
    for (const e of this.patterns) {
      const m = e.pattern.exec(path)
      if (!m) continue
      const params: Params = {}
      e.keys.forEach((k, i) => (params[k] = decoded(m[i + 1])))
      return pick(e.methods, method, params)
    }
    return null
  }
}

function pick<R>(methods: Map<string, R>, method: string, params: Params): Match<R> {
  const route = methods.get(method) ?? (method === 'HEAD' ? methods.get('GET') : undefined)
  if (route) return { route, params }
  const allow = [...methods.keys()]
  if (methods.has('GET')) allow.push('HEAD')
  return { allow }
}

// A segment whose percent-escapes are not UTF-8 (`%E0`) names nothing a route could hold: the request is refused
// as malformed rather than failing in decodeURIComponent.
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    throw new ApiError({ code: 'bad_request', message: 'The path has a percent-escape that is not UTF-8' })
  }
}
