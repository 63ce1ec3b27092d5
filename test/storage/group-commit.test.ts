import t from 'tap'
import { groupCommit } from '../../src/storage/group-commit.js'

// The group commit's schedule (storage/group-commit.ts), with a `write` the test finishes by hand: which items go
// together, and when a batch may start beside one being written. Order only; no time is measured or waited for.

const turn = () => new Promise((ok) => setImmediate(ok))

function writes() {
  const batches: number[][] = []
  const finish: (() => void)[] = []
  const write = (items: number[]) => {
    batches.push(items)
    return new Promise<Promise<number>[]>((ok) => finish.push(() => ok(items.map((i) => Promise.resolve(i * 10)))))
  }
  return { batches, finish, write }
}

t.test('a lone item is written at the end of its turn', async (t) => {
  const w = writes()
  const add = groupCommit(w.write, { max: 100, concurrent: 2, alongside: 6 })
  const one = add(1)
  t.same(w.batches, [], 'not within the turn that asked for it')
  await turn()
  t.same(w.batches, [[1]], 'but right after it')
  w.finish[0]()
  t.equal(await one, 10, 'and answered with its own outcome')
})

t.test('while a batch is written, fewer than `alongside` items wait for it and then go together', async (t) => {
  const w = writes()
  const add = groupCommit(w.write, { max: 100, concurrent: 2, alongside: 6 })
  const first = add(1)
  await turn()
  const waiting = [2, 3, 4].map(add)
  await turn()
  t.same(w.batches, [[1]], 'three items do not start a second commit')
  w.finish[0]()
  await first
  t.same(w.batches, [[1], [2, 3, 4]], 'they start one when the first ends')
  w.finish[1]()
  t.same(await Promise.all(waiting), [20, 30, 40], 'each answered with its own outcome')
})

t.test('`alongside` items start a batch beside the one being written, up to `concurrent`', async (t) => {
  const w = writes()
  const add = groupCommit(w.write, { max: 100, concurrent: 2, alongside: 3 })
  add(1)
  await turn()
  ;[2, 3, 4].map(add)
  await turn()
  t.same(w.batches, [[1], [2, 3, 4]], 'three items are a batch of their own')
  ;[5, 6, 7].map(add)
  await turn()
  t.equal(w.batches.length, 2, 'no third while two are written')
  w.finish[0]()
  await turn()
  t.same(w.batches.at(-1), [5, 6, 7], 'it starts when one ends')
})

t.test('a full batch closes at once, within the turn', async (t) => {
  const w = writes()
  const add = groupCommit(w.write, { max: 3, concurrent: 2, alongside: 6 })
  ;[1, 2, 3, 4].map(add)
  t.same(w.batches, [[1, 2, 3]], 'the first three, before the turn ends')
  await turn()
  t.same(w.batches, [[1, 2, 3]], 'the fourth is one item, fewer than `alongside`: it waits')
  w.finish[0]()
  await turn()
  t.same(w.batches, [[1, 2, 3], [4]], 'until the first ends')
})
