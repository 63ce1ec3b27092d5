// npm run gen:docs — writes the manual's generated pages (docs/configuration.md, docs/cli.md) from the settings and
// command tables.
import { writeFileSync } from 'node:fs'
import { GENERATED_PAGES } from './docs-pages.js'

for (const page of GENERATED_PAGES) writeFileSync(page.file, page.text())
