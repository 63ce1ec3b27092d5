import t from 'tap'
import * as v from 'valibot'
import {
  EVENT_ENVELOPES,
  EVENT_TYPES,
  type EventData,
  type EventOf,
  type EventType,
} from '../../src/events/catalogue.js'

// Compile-time (npm run typecheck type-checks this file): each type's data is exactly its schema's output, in the
// envelope too, and a type is never paired with another type's data. At runtime: the schemas hold the same line.

type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false
type EnvelopeData<T extends EventType> = v.InferOutput<(typeof EVENT_ENVELOPES)[T]>['data']

type KeyData = { prefix: string; name: string | null; who: string | null }
type Flat<T> = { [K in keyof T]: T[K] }

const exact: {
  rotated: Equal<EventData<'key.rotated'>, Flat<KeyData & { newPrefix: string }>>
  created: Equal<EventData<'key.created'>, KeyData>
  envelope: { [T in EventType]: Equal<EnvelopeData<T>, EventData<T>> }[EventType]
  quota: Equal<EventData<'quota.warning'>, { month: string; plan: string; limit: number; used: number }>
  lead: Equal<
    Pick<EventData<'lead.created'>, 'id' | 'createdAt' | 'keyPrefix'>,
    Record<'id' | 'createdAt' | 'keyPrefix', string>
  >
} = { rotated: true, created: true, envelope: true, quota: true, lead: true }

const data = { prefix: 'a', name: null, who: null }
const changed = (rotated: boolean) => (rotated ? 'key.rotated' : 'key.created')
// @ts-expect-error a type that may be key.rotated needs newPrefix
const lost: EventOf<'key.created' | 'key.rotated'> = { type: changed(true), data }
// @ts-expect-error key.rotated's envelope has newPrefix
const rotatedWithout: v.InferOutput<(typeof EVENT_ENVELOPES)['key.rotated']>['data'] = data

t.test('every type: its data is its schema’s output, its envelope is typed by it', async (t) => {
  void [exact, lost, rotatedWithout] // checked by the type-checker, not here
  const rotated = { type: 'key.rotated', timestamp: new Date().toISOString(), data: { ...data, newPrefix: 'b' } }
  const parsed = v.parse(EVENT_ENVELOPES['key.rotated'], rotated)
  t.equal(parsed.data.newPrefix, 'b')
  t.notOk(v.is(EVENT_ENVELOPES['key.rotated'], { ...rotated, data }), 'at runtime too, newPrefix is required')
  t.same(Object.keys(EVENT_ENVELOPES).sort(), [...EVENT_TYPES].sort())
  for (const type of EVENT_TYPES) {
    const other = EVENT_TYPES.find((o) => o !== type)
    t.notOk(v.is(EVENT_ENVELOPES[type], { ...rotated, type: other }), `${type}'s envelope refuses ${other}`)
  }
})
