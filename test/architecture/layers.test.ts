import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'

// ARCHITECTURE.md's code map lists the folders of src/ from the top down: a folder imports only folders below it,
// except http/errors.ts (the one error type), which any folder may import. Only cli/ imports service.ts (the files
// beside it, routes.ts and shutdown.ts, are the composition root's own), and only main.ts imports cli/. Only the
// domain folders and the low-level outbox/, audit/ and storage/ hold SQL.
const root = new URL('../../src/', import.meta.url).pathname
const map = readFileSync(new URL('../../ARCHITECTURE.md', import.meta.url), 'utf8')
const order = [...map.matchAll(/^- `src\/(\w+)\/`/gm)].map((m) => m[1])
const IMPORT = /from '(\.{1,2}\/[^']+)'/g

function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8')
  return [...text.matchAll(IMPORT)].map((m) => join(file, '..', m[1]))
}

const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'))

t.test('a folder imports only the folders below it in the code map', async (t) => {
  t.ok(order.length >= 8, `the code map lists ${order.join(', ')}`)
  for (const file of files.filter((f) => f.includes('/'))) {
    const from = file.split('/')[0]
    for (const target of importsOf(file)) {
      const to = target.includes('/') ? target.split('/')[0] : null
      if (target === 'http/errors.js' || to === from) continue
      if (to === null) {
        if (from !== 'cli' || target !== 'service.js') t.fail(`${file} imports ${target}`)
        continue
      }
      if (order.indexOf(to) <= order.indexOf(from)) t.fail(`${file} imports ${target}: ${to}/ is not below ${from}/`)
    }
  }
  t.pass('checked')
})

t.test('only main.ts imports cli/', async (t) => {
  for (const file of files.filter((f) => !f.startsWith('cli/') && f !== 'main.ts'))
    for (const target of importsOf(file)) if (target.startsWith('cli/')) t.fail(`${file} imports ${target}`)
  t.pass('checked')
})

// protocols/ (below completions/, above ops/) is pure translation between the SDKs' protocols: it imports its own
// files, the one error type and valibot, nothing that does I/O.
t.test('protocols/ imports only itself, http/errors.ts and valibot', async (t) => {
  const PACKAGE = /from '([^.'][^']*)'/g
  for (const file of files.filter((f) => f.startsWith('protocols/'))) {
    for (const target of importsOf(file))
      if (!target.startsWith('protocols/') && target !== 'http/errors.js') t.fail(`${file} imports ${target}`)
    const text = readFileSync(join(root, file), 'utf8')
    for (const [, name] of text.matchAll(PACKAGE)) if (name !== 'valibot') t.fail(`${file} imports ${name}`)
  }
  t.ok(order.indexOf('protocols') > order.indexOf('completions'), 'below completions/')
  t.equal(order.at(-1), 'ops', 'ops/ stays the floor')
})

// SQL lives in the domain folders, outbox/, audit/ and storage/: everything else calls their functions. A query is a
// tagged template on the pool or a transaction (`sql`, `tx`, with or without type arguments), or one of the driver's
// query methods.
const SQL_HOMES = ['accounts', 'leads', 'events', 'quota', 'completions', 'outbox', 'audit', 'storage']
const QUERY = /\b(?:\w*sql|tx)\s*(?:<[^`]{0,300}?>)?\s*`|\.(?:begin|unsafe|cursor|savepoint)\(|from 'postgres'/i

t.test('SQL only in the domain folders, outbox/, audit/ and storage/', async (t) => {
  for (const file of files.filter((f) => !SQL_HOMES.includes(f.split('/')[0]))) {
    const found = QUERY.exec(readFileSync(join(root, file), 'utf8'))
    if (found) t.fail(`${file}: ${found[0]}`)
  }
  t.pass('checked')
})

t.test('the SQL check finds queries', async (t) => {
  for (const text of [
    'sql`select 1`',
    'await sql<{ id: string; n: number }[]>`select id`',
    'tx`delete from x`',
    'sql.begin(',
  ]) {
    t.ok(QUERY.test(text), text)
  }
  t.notOk(QUERY.test("import type { Sql } from '../storage/db.js'"), 'a type import of Sql')
})
