import t from 'tap'
import { cliOn } from '../support/cli.js'
import { testDatabase } from '../support/database.js'

// The model aliases a key may call, from the command line: set at creation, listed, changed, kept by a rotation and
// lifted with `all`; a name the configuration does not give (primary, fast, STUDIO_MODEL_ALIASES) is refused in one
// line with exit 2, changing nothing.
const dbEnv = await testDatabase(t)

const cli = cliOn({ ...dbEnv, STUDIO_MODEL_ALIASES: 'coder=anthropic:claude-sonnet-4-5' })
const prefixOf = (key: string) => key.split('_')[1]
async function modelsListed(prefix: string) {
  const { out } = await cli(['keys', 'list'])
  const row = out.find((l) => l.startsWith(`${prefix}\t`))!.split('\t')
  return row[out[0].split('\t').indexOf('MODELS')]
}

t.test('happy', async (t) => {
  t.test('--models limits the aliases at creation and with keys limit; all lifts it', async (t) => {
    const k = await cli(['keys', 'create', '--plan', 'FREE', '--models', 'coder, fast,coder'])
    t.equal(k.code, 0, k.err.join('\n'))
    const prefix = prefixOf(k.key)
    t.equal(await modelsListed(prefix), 'fast,coder', 'each once, in the order of the configuration')
    const one = await cli(['keys', 'limit', prefix, '--models', 'primary'])
    t.same(one.out, [`key ${prefix}: rate limit none, monthly completions none, models primary`])
    const rate = await cli(['keys', 'limit', prefix, '--rate-limit', '9'])
    t.same(rate.out, [`key ${prefix}: rate limit 9, monthly completions none, models primary`], 'the models stay')
    const all = await cli(['keys', 'limit', prefix, '--models', 'ALL'])
    t.same(all.out, [`key ${prefix}: rate limit 9, monthly completions none, models all`])
    t.equal(await modelsListed(prefix), '-', '`-`: every alias')
    const entries = (await cli(['audit'])).out.filter((l) => l.split('\t')[4] === prefix).map((l) => l.split('\t'))
    const valuesOf = (e: string[]) => [e[3], JSON.parse(e[6] === '-' ? 'null' : e[6]), JSON.parse(e[7])]
    t.same(
      entries.map(valuesOf).map(([action, before, after]) => [action, before?.models, after.models]),
      [
        ['key.created', undefined, ['fast', 'coder']],
        ['key.limited', ['fast', 'coder'], ['primary']],
        ['key.limited', ['primary'], ['primary']],
        ['key.limited', ['primary'], null],
      ],
      'each change is an audit entry with the models before and after'
    )
  })

  t.test('a rotated key keeps its models', async (t) => {
    const k = await cli(['keys', 'create', '--plan', 'FREE', '--models', 'fast'])
    const rotated = await cli(['keys', 'rotate', prefixOf(k.key), '--grace', '0'])
    t.equal(await modelsListed(prefixOf(rotated.key)), 'fast')
  })
})

t.test('errors', async (t) => {
  t.test('an alias not configured, or none: one line, exit 2, nothing changes', async (t) => {
    const k = await cli(['keys', 'create', '--plan', 'FREE', '--models', 'all'])
    const prefix = prefixOf(k.key)
    for (const [args, message] of [
      [
        ['keys', 'limit', prefix, '--models', 'gpt-4o'],
        /^studio: --models: unknown model alias "gpt-4o"; the configured aliases are primary, fast, coder$/,
      ],
      [['keys', 'limit', prefix, '--models', 'fast,Coder'], /--models: unknown model alias "Coder"/],
      [['keys', 'limit', prefix, '--models', ','], /--models: no model alias named; .* \(or all\)/],
      [['keys', 'limit', prefix, '--models', 'all,fast'], /--models: unknown model alias "all"/],
      [['keys', 'limit', prefix, '--rate-limit', '3', '--models', 'x'], /--models: unknown model alias "x"/],
      [['keys', 'create', '--plan', 'FREE', '--models', 'coder,mini'], /--models: unknown model alias "mini"/],
    ] as const) {
      const r = await cli([...args])
      t.equal(r.code, 2, args.join(' '))
      t.equal(r.err.length, 1, 'one line')
      t.match(r.err[0], message)
      t.same(r.out, [])
    }
    t.equal(await modelsListed(prefix), '-', 'nothing changed')
  })
})
