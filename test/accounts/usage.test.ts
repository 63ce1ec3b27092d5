import t from 'tap'
import { run } from '../../src/cli/cli.js'
import { usageMonth } from '../../src/accounts/usage.js'
import { openTestDatabase, testDatabase } from '../support/database.js'
import { issueKey } from '../support/server.js'

async function cli(env: Record<string, string>, args: string[]) {
  const out: string[] = []
  const err: string[] = []
  const code = await run(args, env, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return {
    code,
    out,
    err,
    rows: out.slice(1).map((l) => Object.fromEntries(out[0].split('\t').map((h, i) => [h, l.split('\t')[i]]))),
  }
}

t.test('usage months', async (t) => {
  t.same(usageMonth(Date.UTC(2026, 0, 31, 23, 59)), {
    month: '2026-01-01',
    start: new Date('2026-01-01T00:00:00Z'),
    end: new Date('2026-02-01T00:00:00Z'),
  })
  t.same(usageMonth('2025-12')?.end, new Date('2026-01-01T00:00:00Z'))
  for (const bad of ['2025-13', '2025-1', '25-01', '2025-01-01', '']) t.equal(usageMonth(bad), null, bad)
})

t.test('studio usage: per account, this month', async (t) => {
  const dbEnv = await testDatabase(t)
  const db = await openTestDatabase(t, dbEnv)
  const sql = db.sql
  const accountOf = async (key: string) =>
    (await sql<{ account_id: string }[]>`select account_id from api_keys where prefix = ${key.split('_')[1]}`)[0]
      .account_id
  const free = await issueKey(sql, { email: 'free@example.com' })
  const pro = await issueKey(sql, { email: 'pro@example.com', plan: 'PRO' })
  const big = await issueKey(sql, { plan: 'ENTERPRISE' })
  const idle = await issueKey(sql, { email: 'idle@example.com', plan: 'STARTER' })
  const [freeId, proId, bigId, idleId] = await Promise.all([free, pro, big, idle].map(accountOf))

  const now = new Date()
  const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15))
  const { month } = usageMonth(now.getTime())!
  const { month: previous } = usageMonth(lastMonth.getTime())!
  const completion = (account: string, key: string, outcome: string, input: number, output: number, at: Date) => sql`
    insert into completions (account_id, key_prefix, model_alias, upstream_model, input_tokens, output_tokens,
                             cache_read_input_tokens, cache_creation_input_tokens, latency_ms, attempts, outcome, created_at)
    values (${account}, ${key.split('_')[1]}, 'primary', 'model-x', ${input}, ${output}, 0, 0, 100, 1, ${outcome}, ${at})`
  await completion(freeId, free, 'ok', 10, 20, now)
  await completion(freeId, free, 'ok', 1, 2, now)
  await completion(freeId, free, 'upstream_timeout', 0, 0, now)
  await completion(freeId, free, 'ok', 1000, 1000, lastMonth)
  await completion(proId, pro, 'ok', 3_000_000_000 / 3, 7, now)
  await completion(proId, pro, 'ok', 3_000_000_000 / 3, 7, now)
  await completion(proId, pro, 'ok', 3_000_000_000 / 3, 7, now)
  await completion(bigId, big, 'ok', 5, 5, now)
  await sql`insert into quota_usage (account_id, month, used) values
    (${freeId}, ${month}, 2), (${proId}, ${month}, 3), (${bigId}, ${month}, 1), (${freeId}, ${previous}, 100)`

  const env = { ...dbEnv, STUDIO_QUOTA_PRO: '50000' }
  const { code, rows, out } = await cli(env, ['usage'])
  t.equal(code, 0, out.join('\n'))
  const row = (id: string) => rows.find((r) => r.ACCOUNT === id)
  t.same(row(freeId), {
    ACCOUNT: freeId,
    PLAN: 'FREE',
    USER: 'free@example.com',
    COMPLETIONS: '2',
    FAILED: '1',
    INPUT_TOKENS: '11',
    OUTPUT_TOKENS: '22',
    COST_USD: 'no price',
    QUOTA_USED: '2',
    QUOTA_LIMIT: '100',
    QUOTA_LEFT: '98',
  })
  t.match(row(proId), {
    PLAN: 'PRO',
    COMPLETIONS: '3',
    INPUT_TOKENS: '3000000000',
    OUTPUT_TOKENS: '21',
    QUOTA_LIMIT: '50000',
    QUOTA_LEFT: '49997',
  })
  t.match(row(bigId), {
    PLAN: 'ENTERPRISE',
    USER: '-',
    COMPLETIONS: '1',
    QUOTA_USED: '1',
    QUOTA_LIMIT: 'unlimited',
    QUOTA_LEFT: 'unlimited',
  })
  t.match(row(idleId), {
    PLAN: 'STARTER',
    COMPLETIONS: '0',
    FAILED: '0',
    INPUT_TOKENS: '0',
    COST_USD: '0.000000',
    QUOTA_USED: '0',
    QUOTA_LIMIT: '5000',
    QUOTA_LEFT: '5000',
  })

  const before = await cli(env, ['usage', '--month', previous.slice(0, 7)])
  t.equal(before.code, 0)
  t.match(
    before.rows.find((r) => r.ACCOUNT === freeId),
    { COMPLETIONS: '1', INPUT_TOKENS: '1000', QUOTA_USED: '100', QUOTA_LEFT: '0' }
  )
  t.match(
    before.rows.find((r) => r.ACCOUNT === proId),
    { COMPLETIONS: '0', QUOTA_USED: '0' }
  )

  for (const args of [
    ['usage', '--month', '2026-13'],
    ['usage', 'extra'],
    ['usage', '--bogus'],
  ]) {
    const bad = await cli(env, args)
    t.equal(bad.code, 2, args.join(' '))
    t.match(bad.err.at(-1), /^usage: studio /)
  }
})

t.test('studio usage --by upstream and --by model: every attempt, and the cost of each', async (t) => {
  const dbEnv = await testDatabase(t)
  const db = await openTestDatabase(t, dbEnv)
  const sql = db.sql
  const key = await issueKey(sql, { email: 'fallback@example.com' })
  const prefix = key.split('_')[1]
  const [{ account_id }] = await sql`select account_id from api_keys where prefix = ${prefix}`
  const attempt = (upstream: string, outcome: string) => ({ upstream, model: 'm', outcome, latency_ms: 5 })
  const completion = (outcome: string, tries: unknown[] | null) => sql`
    insert into completions (account_id, key_prefix, model_alias, upstream_model, latency_ms, attempts, outcome, tries)
    values (${account_id}, ${prefix}, 'primary', 'm', 10, ${tries?.length ?? 1}, ${outcome}, ${tries as never})`
  await completion('ok', [attempt('anthropic', 'upstream_unavailable'), attempt('openai', 'ok')])
  await completion('ok', [attempt('anthropic', 'ok')])
  await completion('upstream_unavailable', [
    attempt('anthropic', 'upstream_timeout'),
    attempt('openai', 'upstream_unavailable'),
  ])
  await completion('ok', null)
  await sql`
    insert into completions (account_id, key_prefix, model_alias, upstream_model, input_tokens, output_tokens,
      latency_ms, attempts, outcome, tries, cost_micros)
    values (${account_id}, ${prefix}, 'primary', 'gpt-4.1', 250, 125, 10, 1, 'ok',
      ${[attempt('openai', 'ok')] as never}, 1500)`
  const { code, rows } = await cli(dbEnv, ['usage', '--by', 'upstream'])
  t.equal(code, 0)
  // The cost is of the completions each upstream answered last; the fake rows before the last have no price.
  t.same(rows, [
    { ACCOUNT: account_id, UPSTREAM: 'anthropic', CALLS: '3', FAILED: '2', COST_USD: 'no price' },
    { ACCOUNT: account_id, UPSTREAM: 'openai', CALLS: '3', FAILED: '1', COST_USD: '0.001500 + 2 no price' },
  ])
  const byModel = await cli(dbEnv, ['usage', '--by', 'model'])
  t.equal(byModel.code, 0)
  t.same(byModel.rows, [
    {
      ACCOUNT: account_id,
      MODEL: 'gpt-4.1',
      COMPLETIONS: '1',
      FAILED: '0',
      INPUT_TOKENS: '250',
      OUTPUT_TOKENS: '125',
      COST_USD: '0.001500',
    },
    {
      ACCOUNT: account_id,
      MODEL: 'm',
      COMPLETIONS: '3',
      FAILED: '1',
      INPUT_TOKENS: '0',
      OUTPUT_TOKENS: '0',
      COST_USD: 'no price',
    },
  ])
  const bad = await cli(dbEnv, ['usage', '--by', 'key'])
  t.equal(bad.code, 2)
})
