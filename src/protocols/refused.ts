// biome-ignore lint/suspicious/noExplicitAny: a JSON body, read member by member
export type Json = Record<string, any>

// A request translated to the other protocol, and the members it could not express there: the route answers 400
// naming them, before any upstream call, rather than dropping them.
export interface Translated {
  body: Json
  refused: string[]
}

// The members of `value` a translation neither carries nor can leave out: those outside `carried` whose value asks
// for something (`neutral` says which values ask for nothing; an unknown member always asks).
export function refusedMembers(
  value: Json,
  at: string,
  carried: ReadonlySet<string>,
  neutral: Record<string, (member: unknown) => boolean> = {}
): string[] {
  const refused: string[] = []
  for (const [name, member] of Object.entries(value)) {
    if (carried.has(name) || member === undefined) continue
    if (neutral[name]?.(member)) continue
    refused.push(at === '' ? name : `${at}.${name}`)
  }
  return refused
}

export const absent = (x: unknown) => x == null
export const emptyObject = (x: unknown) => x == null || (typeof x === 'object' && Object.keys(x).length === 0)
export const emptyList = (x: unknown) => x == null || (Array.isArray(x) && x.length === 0)
