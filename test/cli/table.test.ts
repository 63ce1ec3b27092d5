import t from 'tap'
import { usageForms } from '../../src/cli/command.js'
import { commands } from '../../src/cli/commands.js'
import { HELP } from '../../src/cli/cli.js'

t.test('the help names every form with its help line', async (t) => {
  for (const { form, help } of commands.flatMap(usageForms)) {
    t.match(HELP, `  ${form}`)
    for (const line of help.split('\n')) t.match(HELP, line)
  }
})

t.test('a command name is one or two words and no two commands share one', async (t) => {
  const names = commands.map((c) => c.name)
  t.same(new Set(names).size, names.length)
  for (const name of names) t.match(name, /^[a-z-]+( [a-z-]+)?$/)
})
