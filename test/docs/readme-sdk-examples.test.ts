import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { cachedPython, pythonSkip } from '../support/pytest.js'
import { rootPath } from '../support/paths.js'
import { startTestServer } from '../support/server.js'

// The README's "OpenAI and Anthropic SDKs" examples, run as written against the service with the echo upstream: the
// TypeScript ones by Node (they are plain ES modules) with the official npm SDKs, the Python ones with the official
// Python SDKs. Only the documented port is changed. Each prints the answer, which echo makes the prompt: "Hi".

const exec = promisify(execFile)
const DOCUMENTED_PORT = ':8080'

const readme = readFileSync(rootPath('README.md'), 'utf8')
const section = /^## OpenAI and Anthropic SDKs\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1] ?? ''
const examples = [...section.matchAll(/^```(ts|python)\n([\s\S]*?)^```$/gm)].map(([, lang, code]) => ({ lang, code }))

// Started before the first subtest: the root test ends (and removes the embedded database's directory) once its
// subtests are done.
const s = await startTestServer(t, { STUDIO_UPSTREAM: 'echo' })
const key = await s.key()

t.test('the section has an example for each SDK in both languages', async (t) => {
  t.same(
    examples.map((e) => [e.lang, /from ['"]?(openai|@anthropic-ai\/sdk|anthropic)/.exec(e.code)?.[1]]),
    [
      ['ts', 'openai'],
      ['ts', '@anthropic-ai/sdk'],
      ['python', 'openai'],
      ['python', 'anthropic'],
    ]
  )
  for (const e of examples) t.ok(e.code.trim().split('\n').length <= 5, `${e.lang}: five lines at most`)
})

const port = `:${new URL(s.url).port}`
// Under node_modules, so that the examples' imports find the repository's SDKs.
mkdirSync(rootPath('node_modules/.cache'), { recursive: true })
const dir = mkdtempSync(rootPath('node_modules/.cache/readme-sdk-examples-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

async function run(bin: string, file: string, code: string) {
  writeFileSync(join(dir, file), code.replaceAll(DOCUMENTED_PORT, port))
  const { stdout } = await exec(bin, [join(dir, file)], {
    env: { PATH: process.env.PATH, STUDIO_API_KEY: key },
    timeout: 60_000,
  })
  return stdout
}

t.test('the TypeScript examples print the answer', async (t) => {
  for (const [i, e] of examples.entries())
    if (e.lang === 'ts') t.equal(await run(process.execPath, `example-${i}.mjs`, e.code), 'Hi\n')
})

t.test('the Python examples print the answer', { skip: pythonSkip(t) }, async (t) => {
  const python = process.env.STUDIO_PYTHON ?? (await cachedPython('studio-readme-sdks-venv', ['openai', 'anthropic']))
  for (const [i, e] of examples.entries())
    if (e.lang === 'python') t.equal(await run(python, `example-${i}.py`, e.code), 'Hi\n')
})
