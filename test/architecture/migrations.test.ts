import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import t from 'tap'

// Migrations are expand-then-contract (ARCHITECTURE.md, "Upgrades"): a release's migration never breaks the release
// before it, still running over the same database during a rolling upgrade. A statement that removes or narrows
// something (drop, rename, set not null, a column's type) must say, in a `-- contract:` comment just above it, which
// release stopped using what it removes. The migrations written before the rule were checked by hand; the one such
// statement among them is listed here with why it is safe.
const dir = new URL('../../sql/', import.meta.url)
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.sql'))
  .sort()
const CONTRACT =
  /\b(drop\s+(table|column|function|type|view|index|schema|trigger|constraint)|rename|set\s+not\s+null|alter\s+column\s+\S+\s+(set\s+data\s+)?type)\b/i
const CHECKED: Record<string, string> = {
  '015_mail_endpoint_notice.sql': 'widens a check constraint (drop and add in one transaction): old values stay valid',
}

t.test('every migration is NNN_name.sql with a number of its own', async (t) => {
  for (const f of files) t.match(f, /^\d{3}_[\w-]+\.sql$/, f)
  const numbers = files.map((f) => f.slice(0, 3))
  t.same(numbers, [...new Set(numbers)], 'no number twice: renumber a migration that lands after another took it')
})

t.test('a statement that contracts the schema says which release stopped using it', async (t) => {
  for (const f of files.filter((f) => !(f in CHECKED))) {
    const lines = readFileSync(new URL(f, dir), 'utf8').split('\n')
    lines.forEach((line, i) => {
      const code = line.replace(/--.*$/, '')
      if (!CONTRACT.test(code)) return
      let above = i - 1
      while (above >= 0 && /^\s*--/.test(lines[above]) && !/^\s*-- contract:/.test(lines[above])) above--
      t.ok(above >= 0 && /^\s*-- contract:/.test(lines[above]), `${f}:${i + 1}: ${line.trim()}`)
    })
  }
})

// A migration never changes once landed (ARCHITECTURE.md, "Upgrades"): a database that applied it will not apply it
// again, so an edit reaches only new databases. Each file's SHA-256 is recorded in migrations.sha256 (the format of
// `sha256sum`, so `cd sql && sha256sum -c ../test/architecture/migrations.sha256` checks it too), and a changed file
// fails here. The fix is a new migration; only a migration no submitted commit has carried may have its line changed.
t.test('no migration changes once recorded; every migration is recorded', async (t) => {
  const recorded = new Map(
    readFileSync(new URL('migrations.sha256', import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+\*?/).reverse() as [string, string])
  )
  for (const f of files) {
    const hash = createHash('sha256')
      .update(readFileSync(new URL(f, dir)))
      .digest('hex')
    t.ok(recorded.has(f), `${f} is recorded in test/architecture/migrations.sha256 (add its sha256sum line)`)
    if (recorded.has(f)) t.equal(hash, recorded.get(f), `${f} is as recorded: write a new migration instead`)
  }
  t.same(
    [...recorded.keys()].filter((f) => !files.includes(f)),
    [],
    'no recorded migration was removed'
  )
})
