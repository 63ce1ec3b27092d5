import t from 'tap'
import * as v from 'valibot'
import {
  EVENT_ENVELOPES,
  EVENT_TYPES,
  type EventData,
  type EventOf,
  type EventType,
} from '../../src/outbox/catalogue.js'

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

const quota = { month: '2026-11', plan: 'FREE', limit: 100, used: 80 }
const samples: { [T in EventType]: EventData<T> } = {
  'lead.created': {
    name: 'Ada',
    email: 'ada@example.com',
    service: 'web',
    message: 'hello',
    id: '6f1c1c36-6d2c-4f0e-9a43-2b1c4f3d5e6a',
    createdAt: new Date().toISOString(),
    keyPrefix: 'sk_live_abc',
  },
  'lead.updated': {
    id: '6f1c1c36-6d2c-4f0e-9a43-2b1c4f3d5e6a',
    changes: { status: { before: 'new', after: 'won' }, assignee: { before: null, after: 'bo@example.com' } },
    who: null,
    keyPrefix: 'abc',
  },
  'lead.erased': { id: '6f1c1c36-6d2c-4f0e-9a43-2b1c4f3d5e6a' },
  'key.created': data,
  'key.rotated': { ...data, newPrefix: 'b' },
  'key.revoked': data,
  'quota.warning': quota,
  'quota.exhausted': { ...quota, used: 100 },
  'budget.warning': { month: '2026-11', budget: '25.000000', spent: '20.000000' },
  'budget.exhausted': { month: '2026-11', budget: '25.000000', spent: '25.000000' },
  'webhook.test': { endpointId: '0b9f3a8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b', who: null },
}

t.test('every type: its data is its schema’s output, its envelope is typed by it', async (t) => {
  void [exact, lost, rotatedWithout] // checked by the type-checker, not here
  const rotated = { type: 'key.rotated', timestamp: new Date().toISOString(), data: { ...data, newPrefix: 'b' } }
  const parsed = v.parse(EVENT_ENVELOPES['key.rotated'], rotated)
  t.equal(parsed.data.newPrefix, 'b')
  t.notOk(v.is(EVENT_ENVELOPES['key.rotated'], { ...rotated, data }), 'at runtime too, newPrefix is required')
  t.same(Object.keys(EVENT_ENVELOPES).sort(), [...EVENT_TYPES].sort())
  // Each type's envelope takes a valid sample of its own and refuses the same envelope under any other type: the
  // type literal alone decides (the sample's data is valid, so a refusal is not the data's).
  for (const type of EVENT_TYPES) {
    const own = { type, timestamp: rotated.timestamp, data: samples[type] }
    t.ok(v.is(EVENT_ENVELOPES[type], own), `${type}'s envelope takes its sample`)
    for (const other of EVENT_TYPES.filter((o) => o !== type))
      t.notOk(v.is(EVENT_ENVELOPES[type], { ...own, type: other }), `${type}'s envelope refuses type ${other}`)
  }
})
