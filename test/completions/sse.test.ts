import t from 'tap'
import { SseParser } from '../../src/completions/sse.js'

// The upstream SSE parser: the same events whatever the chunking, a line end of any kind, a multi-byte character
// split anywhere.

const parse = (chunks: Buffer[]) => {
  const events: [string, string][] = []
  const p = new SseParser((type, data) => events.push([type, data]))
  for (const c of chunks) p.push(c)
  return events
}

const stream = Buffer.from(
  ': a comment\r\nevent: delta\r\ndata: {"text":"Hé 👋"}\r\n\r\n' +
    'event:ping\ndata:x\n\n' +
    'data: one\rdata:  two\r\rid: 7\nretry: 10\ndata\n\n' +
    'event: nodata\n\n' +
    'data: [DONE]\n\ndata: held until its blank line'
)
const expected: [string, string][] = [
  ['delta', '{"text":"Hé 👋"}'],
  ['ping', 'x'],
  ['message', 'one\n two'],
  ['message', ''],
  ['message', '[DONE]'],
]

t.test('whole, and split at every byte into two chunks', async (t) => {
  t.same(parse([stream]), expected)
  for (let i = 0; i <= stream.length; i++) {
    const got = parse([stream.subarray(0, i), stream.subarray(i)])
    if (JSON.stringify(got) !== JSON.stringify(expected)) t.fail(`split at ${i}`, { got })
  }
})

t.test('one byte per chunk, and chunks whose memory is reused after each push', async (t) => {
  t.same(parse([...stream].map((b) => Buffer.from([b]))), expected)
  const shared = Buffer.alloc(5)
  const events: string[] = []
  const p = new SseParser((_type, data) => events.push(data))
  for (let i = 0; i < stream.length; i += 5) {
    const n = stream.copy(shared, 0, i, i + 5)
    p.push(shared.subarray(0, n))
  }
  t.same(
    events,
    expected.map((e) => e[1])
  )
})
