import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { type PingClock, SseReply } from '../../src/completions/sse-reply.js'
import { eventually } from '../support/eventually.js'

// A stream's `: ping`: 15 s after the last thing sent (a delta or a ping), whatever the moment within the period the
// last delta came; driven by a clock and timers of the test's own, over a real HTTP response.

// Time moves only when `advance` says; each timer due on the way runs at its own moment, in order.
function manualClock() {
  let time = 0
  const timers = new Set<{ at: number; fn: () => void }>()
  const clock: PingClock & { advance(to: number): void; pending(): number } = {
    now: () => time,
    setTimeout(fn, ms) {
      const timer = { at: time + ms, fn }
      timers.add(timer)
      return timer
    },
    clearTimeout: (timer) => timers.delete(timer as { at: number; fn: () => void }),
    advance(to) {
      for (;;) {
        const due = [...timers].filter((x) => x.at <= to).sort((a, b) => a.at - b.at)[0]
        if (!due) break
        timers.delete(due)
        time = due.at
        due.fn()
      }
      time = to
    },
    pending: () => timers.size,
  }
  return clock
}

t.test('a ping 15 s after the last delta or ping, never later', async (t) => {
  const clock = manualClock()
  let res: ServerResponse | null = null
  const server = createServer((_req, r) => {
    res = r
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  t.teardown(() => server.close())
  const answer = fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
  await eventually(() => res, { what: 'the request' })
  const reply = new SseReply(res!, 15_000, clock)
  reply.open([], 'total;dur=0')
  let text = ''
  const reader = (await answer).body!.getReader()
  const reading = (async () => {
    const decoder = new TextDecoder()
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value)
  })()
  const sent = () => text.split('\n\n').filter(Boolean)
  // A delta as a marker: once it has arrived, everything written before it has too.
  const mark = async (name: string) => {
    reply.delta(name)
    await eventually(() => text.includes(`"${name}"`), { what: name })
  }
  const ping = ': ping'
  const delta = (name: string) => `event: delta\ndata: {"text":"${name}"}`

  clock.advance(14_999)
  await mark('a')
  t.same(sent(), [delta('a')], 'no ping before 15 s of silence')
  clock.advance(29_998)
  await mark('b')
  t.same(sent(), [delta('a'), delta('b')], 'the delta at 14.999 s moved the ping to 29.999 s')
  clock.advance(44_997)
  await mark('c')
  t.same(sent(), [delta('a'), delta('b'), delta('c')], 'none 14.999 s after b')
  clock.advance(60_000)
  await mark('d')
  t.same(sent(), [delta('a'), delta('b'), delta('c'), ping, delta('d')], 'one at 59.997 s, 15 s after c')
  clock.advance(89_999)
  await mark('e')
  t.same(sent().slice(4), [delta('d'), ping, delta('e')], 'at 75 s; the next would be at 90 s')
  clock.advance(119_999)
  await mark('f')
  t.same(sent().slice(6), [delta('e'), ping, ping, delta('f')], 'every 15 s through a long silence')
  reply.done('{}')
  await reading
  t.equal(clock.pending(), 0, 'no timer left once done')
})
