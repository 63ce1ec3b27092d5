const levels = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 } as const
export type Level = keyof typeof levels
type Fields = Record<string, unknown>

export interface Sink {
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

// A sink that collects lines and writes them in one write every `flushMs` (or at once past `maxBytes`), and
// everything left when the process exits, ends on a crash (an uncaught exception still emits 'exit') or after
// SIGTERM (serve exits through process.exit). stdout is synchronous on Linux for files, pipes and terminals, so the
// last write at exit is complete. Only SIGKILL (or a fatal signal nobody handles) can lose the last `flushMs`.
function bufferedSink(sink: Sink, { flushMs = 20, maxBytes = 64 * 1024 } = {}): Sink & { flush(): void } {
  let buffered = ''
  let timer: NodeJS.Timeout | null = null
  const flush = () => {
    if (timer) clearTimeout(timer), (timer = null)
    if (buffered === '') return
    const out = buffered
    buffered = ''
    sink.write(out)
  }
  process.on('exit', flush)
  return {
    write(line) {
      buffered += line
      if (buffered.length >= maxBytes) flush()
      else timer ??= setTimeout(flush, flushMs).unref()
    },
    flush,
  }
}

// `new Date().toISOString()` once per millisecond, not once per line.
let isoAt = 0
let iso = ''
const nowIso = () => {
  const now = Date.now()
  if (now !== isoAt) (isoAt = now), (iso = new Date(now).toISOString())
  return iso
}

export function createLogger(level: Level, out: Sink = stdoutSink(), err: Sink = process.stderr): Logger {
  const min = levels[level]
  const emit = (sink: Sink, lvl: Level, msg: string, fields?: Fields, e?: unknown) => {
    if (levels[lvl] < min) return
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
      out.write(`{"time":"${nowIso()}","level":"info","msg":${JSON.stringify(msg)},${fieldsJson}}\n`)
    },
    warn: (msg, fields) => emit(err, 'warn', msg, fields),
    error: (msg, fields, e) => emit(err, 'error', msg, fields, e),
  }
}

// One buffered stdout per process, however many loggers write to it (so lines keep their order).
let stdout: Sink | undefined
const stdoutSink = () => (stdout ??= bufferedSink(process.stdout))
