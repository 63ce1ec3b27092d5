import {
  ROOT_CONTEXT,
  type Span as OtelSpan,
  SpanKind,
  SpanStatusCode,
  type Tracer as OtelTracer,
  trace,
} from '@opentelemetry/api'
import { parseTraceParent } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { Span, TraceConfig, Tracer } from './trace.js'
import { version } from './version.js'

// The Tracer of trace.ts over OpenTelemetry's SDK, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set: spans batched
// and sent to `<endpoint>/v1/traces` as OTLP/HTTP JSON. Nothing is registered globally (no global provider, context
// manager or propagator): a span's parent is passed explicitly. The SDK reads its other standard settings
// (OTEL_TRACES_SAMPLER, OTEL_BSP_*, OTEL_EXPORTER_OTLP_TIMEOUT) from the environment itself.

class SdkSpan implements Span {
  constructor(
    private readonly tracer: OtelTracer,
    private readonly span: OtelSpan
  ) {}

  set(name: string, value: string | number | boolean | string[]) {
    this.span.setAttribute(name, value)
  }

  rename(name: string) {
    this.span.updateName(name)
  }

  fail(type: string) {
    this.span.setAttribute('error.type', type)
    this.span.setStatus({ code: SpanStatusCode.ERROR })
  }

  child(name: string): Span {
    const parent = trace.setSpan(ROOT_CONTEXT, this.span)
    return new SdkSpan(this.tracer, this.tracer.startSpan(name, { kind: SpanKind.CLIENT }, parent))
  }

  traceparent() {
    const c = this.span.spanContext()
    return `00-${c.traceId}-${c.spanId}-0${(c.traceFlags & 1).toString(16)}`
  }

  end() {
    this.span.end()
  }
}

export function otelTracer(config: TraceConfig & { OTEL_EXPORTER_OTLP_ENDPOINT: string }): Tracer {
  const exporter = new OTLPTraceExporter({
    url: `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`,
    headers: config.OTEL_EXPORTER_OTLP_HEADERS ?? {},
  })
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.OTEL_SERVICE_NAME, 'service.version': version }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  })
  const tracer = provider.getTracer('studio-api', version)
  return {
    on: true,
    request(name, traceparent) {
      const remote = traceparent === undefined ? null : parseTraceParent(traceparent)
      const parent = remote ? trace.setSpanContext(ROOT_CONTEXT, remote) : ROOT_CONTEXT
      return new SdkSpan(tracer, tracer.startSpan(name, { kind: SpanKind.SERVER }, parent))
    },
    close: () => provider.shutdown(),
  }
}
