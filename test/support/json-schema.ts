// A small JSON Schema (2020-12) check, for the keywords the served OpenAPI document uses; any other keyword is an
// error, so a schema is never passed by ignoring what it says. Returns the problems, empty when `value` conforms.

type Schema = Record<string, unknown>
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', 'deprecated'])
const FORMATS: Record<string, RegExp> = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  email: /^[^\s@]+@[^\s@]+$/,
  'date-time': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i,
}

const typeOf = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v
const isType = (v: unknown, t: string) => typeOf(v) === t || (t === 'number' && typeOf(v) === 'integer')

export function conforms(value: unknown, schema: Schema, root: Schema, at = ''): string[] {
  const problems: string[] = []
  const fail = (m: string) => problems.push(`${at || '(root)'}: ${m}`)
  for (const [k, s] of Object.entries(schema)) {
    if (ANNOTATIONS.has(k)) continue
    const keyword = KEYWORDS[k]
    if (!keyword) fail(`unsupported keyword ${k}`)
    else problems.push(...keyword(value, s, schema, root, at, fail))
  }
  return problems
}

type Keyword = (v: unknown, s: any, schema: Schema, root: Schema, at: string, fail: (m: string) => void) => string[]
const none: string[] = []
const check = (ok: boolean, fail: () => void) => {
  if (!ok) fail()
  return none
}
const length = (v: unknown) => (typeof v === 'string' ? [...v].length : Array.isArray(v) ? v.length : null)

const KEYWORDS: Record<string, Keyword> = {
  $ref: (v, ref: string, _s, root, at) => conforms(v, resolve(root, ref), root, at),
  type: (v, t: string | string[], _s, _r, _a, fail) =>
    check(
      [t].flat().some((x) => isType(v, x)),
      () => fail(`is ${typeOf(v)}, not ${t}`)
    ),
  enum: (v, e: unknown[], _s, _r, _a, fail) => check(e.includes(v), () => fail(`${JSON.stringify(v)} not in enum`)),
  const: (v, c, _s, _r, _a, fail) => check(v === c, () => fail(`is not ${JSON.stringify(c)}`)),
  anyOf: (v, list: Schema[], _s, root, at, fail) =>
    check(
      list.some((s) => conforms(v, s, root, at).length === 0),
      () => fail('matches no anyOf branch')
    ),
  oneOf: (v, list: Schema[], _s, root, at, fail) =>
    check(list.filter((s) => conforms(v, s, root, at).length === 0).length === 1, () => fail('not exactly one oneOf')),
  allOf: (v, list: Schema[], _s, root, at) => list.flatMap((s) => conforms(v, s, root, at)),
  required: (v, names: string[], _s, _r, _a, fail) => {
    if (isType(v, 'object')) for (const n of names) if (!(n in (v as object))) fail(`lacks ${n}`)
    return none
  },
  properties: (v, props: Record<string, Schema>, _s, root, at) =>
    isType(v, 'object')
      ? Object.entries(props).flatMap(([n, s]) =>
          n in (v as object) ? conforms((v as Schema)[n], s, root, `${at}.${n}`) : []
        )
      : none,
  additionalProperties: (v, extra: boolean | Schema, schema, root, at, fail) => {
    if (!isType(v, 'object') || extra === true) return none
    const known = Object.keys((schema.properties as object) ?? {})
    const others = Object.keys(v as object).filter((n) => !known.includes(n))
    if (extra === false) {
      for (const n of others) fail(`has unknown member ${n}`)
      return none
    }
    return others.flatMap((n) => conforms((v as Schema)[n], extra, root, `${at}.${n}`))
  },
  propertyNames: (v, s: Schema, _s, root, at) =>
    isType(v, 'object') ? Object.keys(v as object).flatMap((n) => conforms(n, s, root, `${at}[name ${n}]`)) : none,
  items: (v, s: Schema, _s, root, at) =>
    Array.isArray(v) ? v.flatMap((item, i) => conforms(item, s, root, `${at}[${i}]`)) : none,
  minItems: (v, n: number, _s, _r, _a, fail) => check(!Array.isArray(v) || v.length >= n, () => fail(`< ${n} items`)),
  maxItems: (v, n: number, _s, _r, _a, fail) => check(!Array.isArray(v) || v.length <= n, () => fail(`> ${n} items`)),
  minLength: (v, n: number, _s, _r, _a, fail) =>
    check(typeof v !== 'string' || length(v)! >= n, () => fail(`shorter than ${n}`)),
  maxLength: (v, n: number, _s, _r, _a, fail) =>
    check(typeof v !== 'string' || length(v)! <= n, () => fail(`longer than ${n}`)),
  minimum: (v, n: number, _s, _r, _a, fail) => check(typeof v !== 'number' || v >= n, () => fail(`below ${n}`)),
  maximum: (v, n: number, _s, _r, _a, fail) => check(typeof v !== 'number' || v <= n, () => fail(`above ${n}`)),
  pattern: (v, p: string, _s, _r, _a, fail) =>
    check(typeof v !== 'string' || new RegExp(p, 'u').test(v), () => fail(`does not match ${p}`)),
  format: (v, f: string, _s, _r, _a, fail) => {
    if (!FORMATS[f]) {
      fail(`unsupported format ${f}`)
      return none
    }
    return check(typeof v !== 'string' || FORMATS[f].test(v), () => fail(`is not a ${f}`))
  },
}

// A local reference, `#/components/schemas/Caller`.
export function resolve(root: Schema, ref: string): Schema {
  if (!ref.startsWith('#/')) throw new Error(`not a local reference: ${ref}`)
  const target = ref
    .slice(2)
    .split('/')
    .reduce<any>((node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], root)
  if (!target) throw new Error(`unresolved reference: ${ref}`)
  return target
}
