import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import t from 'tap'
import { Browser, PASSWORD } from '../support/dashboard-client.js'
import { eventually } from '../support/eventually.js'
import { rootPath } from '../support/paths.js'
import { freePort } from '../support/ports.js'

// The README's walk-through, run as a newcomer runs it: the commands of its ```sh blocks, in their order, in a copy of
// the repository, over a fresh embedded database (DATABASE_URL is not passed on, with or without it set here: the
// newcomer's path), and what the walk-through says they print is what they print.
//
// What is a command (the convention the section is written in): every line of a ```sh block of `## Walk-through`
// that is neither blank nor a comment (`# …`, an expected answer), a line ending in `\` going on on the next. Commands
// run in one terminal's shell session; one whose comment says `(leave running` runs in a terminal of its own (the
// server, the webhook receiver). Their PATH holds `node`, `npm`, `npx` and the system's `sh` (npm runs a package's
// scripts with it; cmd.exe on Windows) and nothing else: no curl, no coreutils.
//
// What the test changes, and only that: `npm ci` links the repository's node_modules instead of installing them again
// (the copy's `npm run try-it` then builds its own dist/ from them); the documented ports 8080 (the server's default)
// and 9000 (the receiver's) are free ones, the server's given as PORT in the environment of every command (the server
// listens there, and the CLI's sign-in link and contrib/try.mjs name it) and the receiver's replaced in the text.

const DOCUMENTED_API_PORT = '8080'
const DOCUMENTED_RECEIVER_PORT = '9000'
const LEAVE_RUNNING = '# (leave running'
// A guard against a hang, not a measure: the first start builds the bundle and creates the embedded database.
const SLOW = 300_000

interface Command {
  text: string
  ownTerminal: boolean
  // The comment lines after it: the answer the README shows.
  answer: string[]
}

function walkthroughCommands(readme: string): Command[] {
  const section = /^## Walk-through\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme)?.[1]
  if (!section) throw new Error('README.md has no "## Walk-through" section')
  const commands: Command[] = []
  for (const [, block] of section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    let pending: string[] = []
    for (const line of block.split('\n')) {
      if (pending.length === 0 && line.trimStart().startsWith('#')) commands.at(-1)?.answer.push(line)
      if (pending.length === 0 && (line.trim() === '' || line.trimStart().startsWith('#'))) continue
      pending.push(line)
      if (line.endsWith('\\')) continue
      const text = pending.join('\n')
      commands.push({ text, ownTerminal: text.includes(LEAVE_RUNNING), answer: [] })
      pending = []
    }
  }
  return commands
}

t.setTimeout(2 * SLOW)
const commands = walkthroughCommands(readFileSync(rootPath('README.md'), 'utf8'))
const apiPort = String(await freePort())
const receiverPort = String(await freePort())
const api = `http://127.0.0.1:${apiPort}`
const asRun = (text: string) =>
  text
    .replaceAll(`:${DOCUMENTED_API_PORT}`, `:${apiPort}`)
    .replace(new RegExp(`\\b${DOCUMENTED_RECEIVER_PORT}\\b`, 'g'), receiverPort)

// The copy: the repository's files as git sees them (tracked, and new ones not ignored), without node_modules, dist/
// or data/.
const dir = mkdtempSync(join(tmpdir(), 'studio-walkthrough-'))
const root = rootPath('')
const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root })
  .toString()
  .split('\0')
  .filter((f) => f && existsSync(join(root, f)))
for (const file of files) {
  mkdirSync(dirname(join(dir, file)), { recursive: true })
  cpSync(join(root, file), join(dir, file))
}

// What a newcomer's machine has: Node.js (`node`, `npm` and `npx`, the ones running this test), the system's shell,
// and no setting of ours but the port.
// npm and npx are found as a shell would, on PATH: a Node.js without them beside it (CI's second pass) has the
// machine's.
const onPath = (name: string) =>
  [dirname(process.execPath), ...(process.env.PATH ?? '').split(':')]
    .map((d) => join(d, name))
    .find((f) => existsSync(f))
const bin = join(dir, '.walkthrough-bin')
mkdirSync(bin)
symlinkSync(process.execPath, join(bin, 'node'))
for (const name of ['npm', 'npx']) {
  const found = onPath(name)
  if (!found) throw new Error(`no ${name} beside node or on PATH`)
  symlinkSync(found, join(bin, name))
}
symlinkSync('/bin/sh', join(bin, 'sh'))
const env = { PATH: bin, HOME: process.env.HOME ?? dir, PORT: apiPort }

const groups: ChildProcess[] = []
// The whole group, even once its leader has exited: what it started in the background may still run.
const stopGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  try {
    if (child.pid) process.kill(-child.pid, signal)
  } catch {
    // the group is gone already
  }
}
process.once('exit', () => groups.forEach((c) => stopGroup(c, 'SIGKILL')))
t.teardown(async () => {
  for (const child of groups.reverse()) {
    const exited = new Promise((ok) =>
      child.exitCode !== null || child.signalCode !== null ? ok(0) : child.once('exit', ok)
    )
    stopGroup(child, 'SIGTERM')
    const timer = setTimeout(() => stopGroup(child, 'SIGKILL'), 60_000)
    await exited
    clearTimeout(timer)
  }
  rmSync(dir, { recursive: true, force: true })
})

// Each child leads a process group of its own, so that the teardown stops it with everything it started.
function start(args: string[]) {
  const child = spawn('/bin/bash', ['--noprofile', '--norc', ...args], { cwd: dir, env, detached: true })
  groups.push(child)
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  return { child, output: () => out }
}

const session = start([])
const outputs: string[] = []
let consumed = 0

async function runInSession(index: number, text: string) {
  const marker = `@@walkthrough ${index} `
  session.child.stdin?.write(`${text}\nprintf '\\n${marker}%s\\n' "$?"\n`)
  const done = await eventually(() => new RegExp(`\\n${marker}(\\d+)\\n`).exec(session.output()), {
    what: `the README's command ${text}`,
    timeout: SLOW,
  })
  outputs[index] = session.output().slice(consumed, done.index)
  consumed = done.index + done[0].length
  if (done[1] !== '0') throw new Error(`\`${text}\` exited ${done[1]}:\n${session.output()}`)
}

// The terminals of their own: the server's first, answering /healthz once up; the others say they are listening.
const terminals: ReturnType<typeof start>[] = []
for (const [index, { text, ownTerminal }] of commands.entries()) {
  if (text.trim() === 'npm ci') {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
    continue
  }
  if (!ownTerminal) {
    await runInSession(index, asRun(text))
    continue
  }
  const s = start(['-c', asRun(text)])
  const first = terminals.length === 0
  terminals.push(s)
  await eventually(
    async () => {
      if (s.child.exitCode !== null) throw new Error(`\`${text}\` exited ${s.child.exitCode}:\n${s.output()}`)
      return first ? (await fetch(`${api}/healthz`).catch(() => null))?.ok : /listening/.test(s.output())
    },
    { what: `\`${text}\` ready`, timeout: SLOW }
  )
}
const [server, receiver] = terminals

// The output of the first command whose text has `part` (they are told apart by what they call), and its position.
function ran(part: string): { index: number; output: string } {
  const index = commands.findIndex((c) => c.text.includes(part))
  if (index < 0) throw new Error(`no command of the walk-through has ${part}`)
  return { index, output: outputs[index] ?? '' }
}

const jsonLines = (output: string) =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))

t.ok(server, 'the walk-through starts a server')
t.match(server?.output(), 'echo', 'the server says the echo upstream is on')

t.test('GET /me answers who the key is', async (t) => {
  const me = jsonLines(ran('try.mjs me').output)
  t.match(me, [{ user: { email: 'ada@example.com', name: 'Ada', role: 'owner' }, plan: 'FREE', quota: { used: 0 } }])
})

t.test('a lead is created, then a second one raises the webhook', async (t) => {
  const leads = commands.flatMap((c, i) => (c.text.includes('try.mjs lead') ? [jsonLines(outputs[i] ?? '')[0]] : []))
  t.equal(leads.length, 2)
  for (const lead of leads) t.match(lead, { id: /^[0-9a-f-]{36}$/, createdAt: String })
})

t.test('a completion from echo, whole and streamed', async (t) => {
  const whole = jsonLines(ran('try.mjs complete').output)
  t.match(whole, [{ model: 'echo', content: 'Hello, echo', stop_reason: 'end_turn' }])
  const streamed = ran('try.mjs stream')
  const events = [...streamed.output.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map(([, name, data]) => ({
    name,
    data: JSON.parse(data),
  }))
  const deltas = events.filter((e) => e.name === 'delta')
  t.ok(deltas.length > 1, 'a delta per word')
  t.equal(deltas.map((e) => e.data.text).join(''), 'Hello, echo')
  t.match(events.at(-1), { name: 'done', data: { model: 'echo', content: 'Hello, echo' } })
})

t.test('the receiver prints the event it verified', async (t) => {
  t.ok(receiver, 'the walk-through starts a receiver in a terminal of its own')
  const line = await eventually(() => /^verified lead\.created \S+$/m.exec(receiver?.output() ?? '')?.[0], {
    what: 'the receiver printing the verified lead.created',
    timeout: 60_000,
  })
  t.ok(line, line)
  t.notMatch(receiver?.output(), /^rejected/m, 'no delivery rejected')
})

t.test('the sign-in link opens the dashboard, signed in', async (t) => {
  const link = new RegExp(`^${api}/dashboard/link/[\\w-]+$`, 'm').exec(ran('signin-link').output)?.[0]
  t.ok(link, 'the CLI prints the link, on the documented server')
  const b = new Browser(api)
  const path = new URL(link ?? api).pathname
  const form = await b.get(path)
  t.equal(form.status, 200)
  t.match(form.text, 'Choose a password')
  const set = await b.post(path, { password: PASSWORD, confirm: PASSWORD })
  t.equal(set.status, 303)
  t.equal(set.headers.get('location'), '/dashboard/keys')
  const keys = await b.get('/dashboard/keys')
  t.equal(keys.status, 200, 'the Keys page, with the session cookie')
  t.match(keys.text, 'ada@example.com')
})

// The README's answers are abbreviated (`…`) and dated; what they spell out whole, a JSON field's string (not a date),
// number or boolean, is in what the command printed.
t.test('the answers the README shows are the ones printed', async (t) => {
  const field = /"\w+":(?:"[^"…]*"|-?\d+|true|false|null)(?=[,}])/g
  for (const [index, { text, ownTerminal, answer }] of commands.entries()) {
    if (ownTerminal) continue
    for (const shown of answer.join('\n').match(field) ?? [])
      if (!/"\d{4}-\d\d-/.test(shown)) t.match(outputs[index], shown, `${shown} after ${text.split('\n')[0]}`)
  }
})

t.test('in the order the issue asks for', async (t) => {
  const order = ['keys create', 'try.mjs me', 'try.mjs lead', 'try.mjs complete', 'try.mjs stream']
  const positions = [...order, 'webhooks add', 'webhook-receiver', 'signin-link'].map((p) => ran(p).index)
  t.same(
    positions,
    [...positions].sort((a, b) => a - b),
    'key, /me, lead, completion, streamed, webhook, dashboard'
  )
  t.ok(commands.findIndex((c) => c.ownTerminal) < positions[0], 'the server first')
})
