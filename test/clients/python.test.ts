import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { clientServers, QUOTA } from '../support/client-servers.js'
import { pythonClientFiles } from '../support/python-client-types.js'
import { cachedPython, pythonSkip, pipInstall, pytest } from '../support/pytest.js'
import { webhookVectors } from '../support/webhook-vectors.js'

// The Python client's pytest suite (clients/python/tests) against the servers this file starts, with the interpreter
// STUDIO_PYTHON: .ci/run sets it to a fresh virtual environment where it ran `pip install clients/python` (the clean
// install) and mypy and ruff. Without it, a virtual environment kept in node_modules/.cache is made once (with
// pytest and hatchling) and the package reinstalled into it from the working tree on every run. The webhook
// deliveries the suite verifies (test/support/webhook-vectors.ts) are written to STUDIO_TEST_WEBHOOK_VECTORS first.
// The client's types and event classes are generated (test/support/python-client-types.ts) from the document the
// server serves, which this file checks without Python.
const exec = promisify(execFile)
const pkg = new URL('../../clients/python/', import.meta.url).pathname

async function python(): Promise<string> {
  if (process.env.STUDIO_PYTHON) return process.env.STUDIO_PYTHON
  const bin = await cachedPython('studio-python-venv', [pkg, 'pytest', 'hatchling'])
  await pipInstall(bin, ['--no-deps', '--no-build-isolation', '--force-reinstall', pkg])
  return bin
}

const s = await clientServers(t)

t.test('the committed types and event classes are generated from the served document', async (t) => {
  const key = await s.key('py-doc@example.com')
  const doc = await (await fetch(`${s.baseURL}/openapi.json`, { headers: { authorization: `Bearer ${key}` } })).json()
  for (const [file, text] of pythonClientFiles(doc)) {
    t.equal(
      readFileSync(file, 'utf8'),
      text,
      `${file.pathname.split('/').at(-1)}: run \`npm run gen:client\` after changing a schema`
    )
  }
})

t.test('the Python client', { skip: pythonSkip(t) }, async (t) => {
  const bin = await python()
  const env = {
    PATH: process.env.PATH,
    PYTHONDONTWRITEBYTECODE: '1',
    STUDIO_BASE_URL: s.baseURL,
    STUDIO_API_KEY: await s.key('py-client@example.com'),
    STUDIO_TEST_QUOTA: String(QUOTA),
    STUDIO_TEST_QUOTA_KEY: await s.key('py-quota@example.com'),
    STUDIO_TEST_LEADS_KEY: await s.key('py-scoped@example.com', ['--scopes', 'leads:write']),
    STUDIO_TEST_KEY_CAP_KEY: await s.key('py-keycap@example.com', ['--monthly-completions', '1']),
    STUDIO_TEST_PROXY_URL: s.proxyURL,
    STUDIO_TEST_WARP_URL: s.warpURL,
    STUDIO_TEST_WARP_KEY_1: await s.warpKey(),
    STUDIO_TEST_WARP_KEY_2: await s.warpKey(),
    STUDIO_TEST_CONTROL_URL: s.controlURL,
    STUDIO_TEST_REFUSED_URL: s.refusedURL,
    STUDIO_TEST_SILENT_URL: s.silentURL,
    STUDIO_TEST_CLOSED_URL: s.closedURL,
    // Each streaming test its own account: the quota is QUOTA a month.
    STUDIO_TEST_STREAM_KEYS: (await Promise.all([1, 2, 3, 4, 5].map((n) => s.key(`py-stream-${n}@example.com`)))).join(
      ','
    ),
  }

  t.test('pytest', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'studio-py-vectors-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const vectors = join(dir, 'webhooks.json')
    writeFileSync(vectors, JSON.stringify(webhookVectors()))
    await pytest(t, bin, { cwd: pkg, tests: 'tests', env: { ...env, STUDIO_TEST_WEBHOOK_VECTORS: vectors } })
  })

  t.test('a clean install used from a plain script', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'studio-py-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const script = join(dir, 'main.py')
    writeFileSync(
      script,
      `import json, os
import studio_api
from studio_api import Studio, AuthenticationError
delivery = json.loads(os.environ["DELIVERY"])
event = studio_api.webhooks.verify(delivery["body"], delivery["headers"], delivery["secret"])
client = Studio()
me = client.me()
lead = client.leads.create(name="A", email="a@example.com", service="s", message="m")
try:
    Studio(api_key="nope").me()
except AuthenticationError as e:
    print(me.plan, lead.id, me._request_id, e.status, event["type"])
`
    )
    const run = await exec(bin, [script], { cwd: dir, env: { ...env, DELIVERY: JSON.stringify(webhookVectors()[0]) } })
    t.match(run.stdout.trim(), /^FREE [0-9a-f-]{36} \S+ 401 lead\.created$/)
    const deps = await exec(
      bin,
      ['-c', 'import importlib.metadata as m; print([r for r in m.requires("studio-api") if "extra" not in r])'],
      { env }
    )
    t.match(deps.stdout, /^\['httpx[^']*'\]$/m, 'httpx is the only runtime dependency')
  })
})
