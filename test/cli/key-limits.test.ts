import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { parseConfig } from '../../src/ops/config.js'
import { openDatabase } from '../../src/storage/db.js'
import { migrate } from '../../src/storage/migrate.js'
import { cliOn } from '../support/cli.js'
import { testDatabase } from '../support/database.js'

// A key's own limits from the command line: set at creation, listed, changed and lifted; bad values refused in one
// line with exit 2, changing nothing (the model aliases a key may call: key-models.test.ts).
const dbEnv = await testDatabase(t)

const cli = cliOn(dbEnv)
const prefixOf = (key: string) => key.split('_')[1]
async function listed(prefix: string, columns: string[]) {
  const { out } = await cli(['keys', 'list'])
  const header = out[0].split('\t')
  const row = out.find((l) => l.startsWith(`${prefix}\t`))!.split('\t')
  t.equal(row.length, header.length, 'a value under each heading')
  return columns.map((c) => row[header.indexOf(c)])
}
const limitsListed = (prefix: string) => listed(prefix, ['RATE_LIMIT', 'MONTHLY_COMPLETIONS'])
const spendListed = (prefix: string) => listed(prefix, ['BUDGET_USD', 'TOKENS_PER_MINUTE'])

t.test('keys create sets them; keys list shows them; none by default', async (t) => {
  const k = await cli(['keys', 'create', '--plan', 'FREE', '--rate-limit', '60', '--monthly-completions', '30'])
  t.equal(k.code, 0, k.err.join('\n'))
  t.same(await limitsListed(prefixOf(k.key)), ['60', '30'])
  const plain = await cli(['keys', 'create', '--email', 'plain@example.com'])
  t.same(await limitsListed(prefixOf(plain.key)), ['-', '-'])
})

t.test('keys list shows the budget in USD and the tokens per minute, - for none', async (t) => {
  const prefix = prefixOf((await cli(['keys', 'create', '--plan', 'FREE'])).key)
  t.same(await spendListed(prefix), ['-', '-'])
  t.equal((await cli(['keys', 'limit', prefix, '--budget', '0.50', '--tokens-per-minute', '300'])).code, 0)
  t.same(await spendListed(prefix), ['0.500000', '300'])
  t.equal((await cli(['keys', 'limit', prefix, '--budget', 'none'])).code, 0)
  t.same(await spendListed(prefix), ['-', '300'])
})

t.test('keys limit sets limits and a budget given together in one transaction', async (t) => {
  const db = await openDatabase(parseConfig(dbEnv))
  t.teardown(() => db.close())
  const prefix = prefixOf((await cli(['keys', 'create', '--plan', 'FREE'])).key)
  const r = await cli(['keys', 'limit', prefix, '--rate-limit', '12', '--budget', '3.50'])
  t.equal(r.code, 0, r.err.join('\n'))
  t.match(r.out, [/rate limit 12/, /a monthly budget of 3\.500000 USD/])
  const [key] = await db.sql`select xmin::text as commit from api_keys where prefix = ${prefix}`
  const entries = await db.sql`
    select action, xmin::text as commit from audit_log
    where target = ${prefix} and action in ('key.limited', 'key.budget_changed') order by id`
  const ofTheCall = ['key.limited', 'key.budget_changed'].map((action) => ({ action, commit: key.commit }))
  t.same([...entries], ofTheCall, 'the key and both entries written by one commit')
})

t.test('keys create sets a budget and tokens per minute, in the key row and its audit entry', async (t) => {
  const db = await openDatabase(parseConfig(dbEnv))
  t.teardown(() => db.close())
  const args = ['--budget', '5.00', '--tokens-per-minute', '40000', '--rate-limit', '60']
  const k = await cli(['keys', 'create', '--email', 'spender@example.com', ...args])
  t.equal(k.code, 0, k.err.join('\n'))
  const prefix = prefixOf(k.key)
  t.same(await spendListed(prefix), ['5.000000', '40000'])
  t.same(await limitsListed(prefix), ['60', '-'])
  const [row] = await db.sql`
    select budget_micros::text as budget, tokens_per_minute from api_keys where prefix = ${prefix}`
  t.same(row, { budget: '5000000', tokens_per_minute: 40000 })
  const [entry] = await db.sql`select after from audit_log where action = 'key.created' and target = ${prefix}`
  t.match(entry.after, { rate_limit: 60, tokens_per_minute: 40000, budget: '5.000000' })
  const plain = await cli(['keys', 'create', '--plan', 'FREE', '--budget', 'none', '--tokens-per-minute', 'none'])
  t.equal(plain.code, 0, plain.err.join('\n'))
  t.same(await spendListed(prefixOf(plain.key)), ['-', '-'], 'none: no budget, no tokens per minute')
  const [plainEntry] = await db.sql`
    select after from audit_log where action = 'key.created' and target = ${prefixOf(plain.key)}`
  t.notOk('budget' in plainEntry.after || 'tokens_per_minute' in plainEntry.after, 'the entry has neither')
})

t.test('keys limit changes one, the other, or lifts them', async (t) => {
  const k = await cli(['keys', 'create', '--plan', 'FREE'])
  const prefix = prefixOf(k.key)
  const rate = await cli(['keys', 'limit', prefix, '--rate-limit', '10'])
  t.equal(rate.code, 0)
  t.same(rate.out, [`key ${prefix}: rate limit 10, monthly completions none, models all`])
  const month = await cli(['keys', 'limit', prefix, '--monthly-completions', '0'])
  t.same(month.out, [`key ${prefix}: rate limit 10, monthly completions 0, models all`], 'the other stays')
  t.same(await limitsListed(prefix), ['10', '0'])
  const lifted = await cli(['keys', 'limit', prefix, '--rate-limit', 'none', '--monthly-completions', 'NONE'])
  t.same(lifted.out, [`key ${prefix}: rate limit none, monthly completions none, models all`])
  t.same(await limitsListed(prefix), ['-', '-'])
})

t.test('a rotated key keeps its limits', async (t) => {
  const limits = ['--monthly-completions', '7', '--budget', '1.00', '--tokens-per-minute', '500']
  const k = await cli(['keys', 'create', '--plan', 'FREE', ...limits])
  const rotated = await cli(['keys', 'rotate', prefixOf(k.key), '--grace', '0'])
  t.same(await limitsListed(prefixOf(rotated.key)), ['-', '7'])
  t.same(await spendListed(prefixOf(rotated.key)), ['1.000000', '500'])
})

t.test('bad values and no flag: one line, exit 2, nothing changes', async (t) => {
  const k = await cli(['keys', 'create', '--plan', 'FREE', '--rate-limit', '5'])
  const prefix = prefixOf(k.key)
  const keysBefore = (await cli(['keys', 'list'])).out.length
  for (const [args, message] of [
    [['keys', 'limit', prefix], /needs --rate-limit N\|none or --monthly-completions N\|none or --models M\|all/],
    [['keys', 'limit', prefix, '--rate-limit', '0'], /--rate-limit: expected a whole number of at least 1, or none/],
    [['keys', 'limit', prefix, '--rate-limit=-3'], /--rate-limit: expected/],
    [['keys', 'limit', prefix, '--rate-limit', '2.5'], /--rate-limit: expected/],
    [['keys', 'limit', prefix, '--monthly-completions', 'lots'], /--monthly-completions: expected .* at least 0/],
    [['keys', 'limit', prefix, '--monthly-completions', '99999999999'], /--monthly-completions: expected/],
    [['keys', 'limit', prefix, '--rate-limit', '3', '--monthly-completions', 'x'], /--monthly-completions/],
    [['keys', 'create', '--plan', 'FREE', '--rate-limit', 'fast'], /--rate-limit: expected/],
    [['keys', 'create', '--plan', 'FREE', '--budget', '5.0.0'], /^studio: --budget: "5.0.0" is not an amount in USD/],
    [['keys', 'create', '--plan', 'FREE', '--budget=-1'], /--budget: "-1" is not an amount/],
    [['keys', 'create', '--email', 'no@example.com', '--tokens-per-minute', '0'], /--tokens-per-minute: .* at least 1/],
    [
      ['keys', 'create', '--plan', 'FREE', '--budget', '5', '--tokens-per-minute', 'x'],
      /--tokens-per-minute: expected/,
    ],
  ] as const) {
    const r = await cli([...args])
    t.equal(r.code, 2, args.join(' '))
    t.equal(r.err.length, 1, 'one line')
    t.match(r.err[0], message)
    t.same(r.out, [])
  }
  t.same(await limitsListed(prefix), ['5', '-'], 'nothing changed')
  t.equal((await cli(['keys', 'list'])).out.length, keysBefore, 'no key made')
  const gone = await cli(['keys', 'limit', 'AAAAAAAAAAAA', '--rate-limit', '3'])
  t.equal(gone.code, 1)
  t.match(gone.err[0], /no key with prefix/)
})

t.test('keys made before per-key limits have none', async (t) => {
  const db = await openDatabase(parseConfig(await testDatabase(t)))
  t.teardown(() => db.close())
  const dir = new URL('../../sql/', import.meta.url)
  const all = readdirSync(dir)
    .filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(new URL(name, dir), 'utf8') }))
  const at = all.findIndex((m) => m.name.endsWith('_key_limits.sql'))
  await migrate(db.sql, all.slice(0, at))
  const [{ id }] = await db.sql`insert into accounts (plan) values ('FREE') returning id`
  await db.sql`insert into api_keys (prefix, secret_sha256, account_id) values ('OLDKEY000002', ${Buffer.alloc(32)}, ${id})`
  t.same(
    await migrate(db.sql, all),
    all.slice(at).map((m) => m.name)
  )
  const [row] = await db.sql`select rate_limit, monthly_completions from api_keys where prefix = 'OLDKEY000002'`
  t.same(row, { rate_limit: null, monthly_completions: null })
})
