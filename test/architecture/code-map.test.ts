import { readdirSync, readFileSync } from 'node:fs'
import t from 'tap'

// ARCHITECTURE.md's code map names every folder of src/, and at most four files stand directly in src/.
const root = new URL('../../', import.meta.url)
const entries = readdirSync(new URL('src/', root), { withFileTypes: true })
const map = readFileSync(new URL('ARCHITECTURE.md', root), 'utf8')

t.test('every folder of src/ is in the code map', async (t) => {
  for (const d of entries.filter((e) => e.isDirectory())) t.match(map, `\`src/${d.name}/\``, `src/${d.name}/`)
})

t.test('at most four source files directly in src/', async (t) => {
  const files = entries.filter((e) => e.isFile()).map((e) => e.name)
  t.ok(files.length <= 4, files.join(', '))
})
