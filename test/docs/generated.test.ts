import { readFileSync } from 'node:fs'
import t from 'tap'
import { usageForms } from '../../src/cli/command.js'
import { commands } from '../../src/cli/commands.js'
import { settingGroups, settings } from '../../src/ops/config.js'
import { GENERATED_PAGES, slug } from '../support/docs-pages.js'

t.test('the generated docs pages are current', async (t) => {
  for (const page of GENERATED_PAGES) {
    const committed = readFileSync(page.file, 'utf8')
    t.equal(committed, page.text(), `${page.file.pathname.split('/').at(-1)}: run \`npm run gen:docs\``)
  }
})

t.test('docs/configuration.md has every setting once, under a heading of its group', async (t) => {
  const page = GENERATED_PAGES[0].text()
  for (const name of Object.keys(settings)) t.equal(page.split(`| \`${name}\` |`).length, 2, name)
  for (const title of Object.values(settingGroups)) t.match(page, `\n## ${title}\n`)
  t.equal(slug('Logs, metrics and tracing'), 'logs-metrics-and-tracing')
})

t.test('docs/cli.md has every usage form, in the table order', async (t) => {
  const page = GENERATED_PAGES[1].text()
  const shown = [...page.matchAll(/^```\nstudio (.+)\n```$/gm)].map((m) => m[1])
  t.same(
    shown,
    commands.flatMap((c) => usageForms(c).map((f) => f.form))
  )
})
