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
  warn(msg: string, fields?: Fields): void
  error(msg: string, fields?: Fields, err?: unknown): void
}

export function createLogger(level: Level, out: Sink = process.stdout, err: Sink = process.stderr): Logger {
  const min = levels[level]
  const emit = (sink: Sink, lvl: Level, msg: string, fields?: Fields, e?: unknown) => {
    if (levels[lvl] < min) return
    const line: Fields = { time: new Date().toISOString(), level: lvl, msg, ...fields }
    if (e instanceof Error)
      line.err = { name: e.name, message: e.message, code: (e as { code?: unknown }).code, stack: e.stack }
    else if (e !== undefined) line.err = String(e)
    sink.write(`${JSON.stringify(line)}\n`)
  }
  return {
    enabled: (lvl) => levels[lvl] >= min,
    debug: (msg, fields) => emit(out, 'debug', msg, fields),
    info: (msg, fields) => emit(out, 'info', msg, fields),
    warn: (msg, fields) => emit(err, 'warn', msg, fields),
    error: (msg, fields, e) => emit(err, 'error', msg, fields, e),
  }
}
