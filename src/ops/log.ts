const levels = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 } as const
export type Level = keyof typeof levels
type Fields = Record<string, unknown>

interface Sink {
  write(line: string): unknown
}

export interface Logger {
  enabled(level: Level): boolean
  debug(msg: string, fields?: Fields): void
  info(msg: string, fields?: Fields): void
  // The same line as info(msg, fields), with the fields already serialized: `"a":1,"b":"x"` (the hot path's lines).
  infoJson(msg: string, fieldsJson: string): void
  warn(msg: string, fields?: Fields): void
  error(msg: string, fields?: Fields, err?: unknown): void
}

// A sink that collects lines and writes them in one write every `flushMs` (or at once when the next line might not fit
// in `maxBytes`), and everything left when the process exits, ends on a crash (an uncaught exception still emits
// 'exit') or after SIGTERM (serve exits through process.exit). stdout is synchronous on Linux for files, pipes and
// terminals, so the last write at exit is complete. Only SIGKILL (or a fatal signal nobody handles) can lose the last
// `flushMs`. Each line is encoded into one reused buffer as it comes, so no string outlives its request (kept until the
// flush, a line per request was old-generation garbage by then).
function bufferedSink(sink: { write(chunk: Uint8Array): unknown }, { flushMs = 20, maxBytes = 64 * 1024 } = {}) {
  const staged = Buffer.allocUnsafe(maxBytes)
  let used = 0
  let timer: NodeJS.Timeout | null = null
  const flush = () => {
    if (timer) {
      clearTimeout(timer)
      timer = null
    }
    if (used === 0) return
    const out = Buffer.from(staged.subarray(0, used))
    used = 0
    sink.write(out)
  }
  process.on('exit', flush)
  return {
    write(line: string) {
      // At most 3 bytes of UTF-8 per UTF-16 unit.
      if (used + line.length * 3 > maxBytes) {
        flush()
        if (line.length * 3 > maxBytes) return void sink.write(Buffer.from(line))
      }
      used += staged.write(line, used)
      timer ??= setTimeout(flush, flushMs).unref()
    },
    flush,
  }
}

// `new Date().toISOString()` once per millisecond, not once per line.
let isoAt = 0
let iso = ''
const nowIso = () => {
  const now = Date.now()
  if (now !== isoAt) {
    isoAt = now
    iso = new Date(now).toISOString()
  }
  return iso
}

// What an info line has before its fields, `{"time":…,"level":"info","msg":…,`, made once per millisecond and message.
let headIso = ''
let headMsg = ''
let head = ''
const infoHead = (msg: string) => {
  const iso = nowIso()
  if (iso !== headIso || msg !== headMsg) {
    headIso = iso
    headMsg = msg
    head = `{"time":"${iso}","level":"info","msg":${JSON.stringify(msg)},`
  }
  return head
}

export type Format = 'json' | 'pretty'

// LOG_FORMAT: `auto` is the human format on a terminal, JSON for whatever reads a pipe or a file.
export const formatFor = (setting: Format | 'auto', terminal = process.stdout.isTTY === true): Format =>
  setting === 'auto' ? (terminal ? 'pretty' : 'json') : setting

// A value of the human format: bare when it cannot be misread, else quoted as JSON (which escapes control characters,
// so a value never starts a line of its own).
const shown = (value: unknown) =>
  typeof value === 'string' && /^[^\s"=\p{Cc}]+$/u.test(value)
    ? value
    : typeof value === 'string' || (typeof value === 'object' && value !== null)
      ? JSON.stringify(value)
      : String(value)

// `12:00:01.250Z INFO  listening url=http://127.0.0.1:8080 pid=4242`, an error's stack indented on the lines after.
function prettyLine(lvl: Level, msg: string, fields: Fields | undefined, e: unknown): string {
  const pairs = Object.entries(fields ?? {}).filter(([, value]) => value !== undefined)
  if (e instanceof Error) pairs.push(['err', `${e.name}: ${e.message}`])
  else if (e !== undefined) pairs.push(['err', String(e)])
  const tail = pairs.map(([key, value]) => ` ${key}=${shown(value)}`).join('')
  const stack = e instanceof Error && e.stack ? `\n${e.stack.split('\n').slice(1).join('\n')}` : ''
  return `${nowIso().slice(11)} ${lvl.toUpperCase().padEnd(5)} ${msg}${tail}${stack}\n`
}

interface LoggerOptions {
  format?: Format
  out?: Sink
  err?: Sink
}

export function createLogger(
  level: Level,
  { format = 'json', out = stdoutSink(), err = process.stderr }: LoggerOptions = {}
): Logger {
  const min = levels[level]
  const emit = (sink: Sink, lvl: Level, msg: string, fields?: Fields, e?: unknown) => {
    if (levels[lvl] < min) return
    if (format === 'pretty') return void sink.write(prettyLine(lvl, msg, fields, e))
    const line: Fields = { time: nowIso(), level: lvl, msg, ...fields }
    if (e instanceof Error)
      line.err = { name: e.name, message: e.message, code: (e as { code?: unknown }).code, stack: e.stack }
    else if (e !== undefined) line.err = String(e)
    sink.write(`${JSON.stringify(line)}\n`)
  }
  return {
    enabled: (lvl) => levels[lvl] >= min,
    debug: (msg, fields) => emit(out, 'debug', msg, fields),
    info: (msg, fields) => emit(out, 'info', msg, fields),
    infoJson(msg, fieldsJson) {
      if (levels.info < min) return
      if (format === 'pretty') return emit(out, 'info', msg, JSON.parse(`{${fieldsJson}}`))
      out.write(`${infoHead(msg)}${fieldsJson}}\n`)
    },
    warn: (msg, fields) => emit(err, 'warn', msg, fields),
    error: (msg, fields, e) => emit(err, 'error', msg, fields, e),
  }
}

// One buffered stdout per process, however many loggers write to it (so lines keep their order).
let stdout: Sink | undefined
const stdoutSink = () => (stdout ??= bufferedSink(process.stdout))
