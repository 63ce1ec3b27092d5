import t from 'tap'
import { createLogger, formatFor } from '../../src/ops/log.js'

const collect = (format: 'json' | 'pretty') => {
  const lines: string[] = []
  const sink = { write: (line: string) => lines.push(line) }
  return { lines, log: createLogger('debug', { format, out: sink, err: sink }) }
}

t.test('pretty: one line of time, level, message and key=value fields', async (t) => {
  const { lines, log } = collect('pretty')
  log.info('listening', { url: 'http://127.0.0.1:8080', database: 'embedded in /srv/data', pid: 42, gone: undefined })
  log.infoJson('request', '"status":200,"path":"/api/v1/me"')
  log.warn('odd', { list: ['a', 'b'], quote: 'say "hi"', nothing: null })
  t.match(lines[0], /^\d\d:\d\d:\d\d\.\d{3}Z INFO {2}listening url=http:\/\/127\.0\.0\.1:8080 /)
  t.match(lines[0], / database="embedded in \/srv\/data" pid=42\n$/)
  t.notMatch(lines[0], /gone/)
  t.match(lines[1], /INFO {2}request status=200 path=\/api\/v1\/me\n$/)
  t.match(lines[2], /WARN {2}odd list=\["a","b"\] quote="say \\"hi\\"" nothing=null\n$/)
})

t.test('pretty: a value cannot start a line of its own; an error brings its stack, indented', async (t) => {
  const { lines, log } = collect('pretty')
  log.info('request', { path: '/x\n12:00:00.000Z INFO  forged' })
  t.equal(lines[0].split('\n').length, 2, 'one line')
  t.match(lines[0], /path="\/x\\n12:00/)
  log.error('failed', { id: 1 }, new Error('boom'))
  const [first, ...stack] = lines[1].trimEnd().split('\n')
  t.match(first, /ERROR failed id=1 err="Error: boom"$/)
  t.ok(stack.length > 0 && stack.every((l) => l.startsWith('    at ')), 'the stack, indented')
})

t.test('json: one JSON object a line, as before', async (t) => {
  const { lines, log } = collect('json')
  log.info('listening', { pid: 42 })
  log.infoJson('request', '"status":200')
  t.match(JSON.parse(lines[0]), { level: 'info', msg: 'listening', pid: 42 })
  t.match(JSON.parse(lines[1]), { level: 'info', msg: 'request', status: 200 })
})

t.test('LOG_FORMAT auto: pretty on a terminal, JSON otherwise; json and pretty as they say', async (t) => {
  t.equal(formatFor('auto', true), 'pretty')
  t.equal(formatFor('auto', false), 'json')
  t.equal(formatFor('json', true), 'json')
  t.equal(formatFor('pretty', false), 'pretty')
})
