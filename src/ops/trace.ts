import type { Config } from './config.js'
import type { Logger } from './log.js'

// Tracing's interface, as the rest of the code sees it: a request's span and the spans of the calls it makes. Off
// unless OTEL_EXPORTER_OTLP_ENDPOINT is set; then OpenTelemetry's SDK is loaded (otel.ts, a chunk of its own in the
// bundle) and the spans go to that endpoint over OTLP/HTTP. Off, nothing of it is loaded and no span is made: the
// pipeline asks `on` once, at start.

type Attribute = string | number | boolean | string[]

export interface Span {
  set(name: string, value: Attribute): void
  rename(name: string): void
  // The span failed: its status is an error, `error.type` says which.
  fail(type: string): void
  // A span for a call this one makes (kind client), started now.
  child(name: string): Span
  // The W3C traceparent that names this span, for the call it stands for.
  traceparent(): string
  end(): void
}

export interface Tracer {
  readonly on: boolean
  // A request's span (kind server), the child of the caller's span when its W3C traceparent is valid.
  request(name: string, traceparent: string | undefined): Span
  // Sends what is left; after it, spans are dropped.
  close(): Promise<void>
}

export const noTracer: Tracer = {
  on: false,
  request: () => {
    throw new Error('tracing is off')
  },
  close: async () => {},
}

export type TraceConfig = Pick<
  Config,
  'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_HEADERS' | 'OTEL_SERVICE_NAME'
>

// The tracer the config asks for, made once by service.ts: the no-op one, without importing anything, unless
// OTEL_EXPORTER_OTLP_ENDPOINT is set.
export async function openTracer(config: TraceConfig, log: Logger): Promise<Tracer> {
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT
  if (endpoint === undefined) return noTracer
  const { otelTracer } = await import('./otel.js')
  log.info('tracing on', { otlp: new URL(endpoint).origin, service: config.OTEL_SERVICE_NAME })
  return otelTracer({ ...config, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })
}
