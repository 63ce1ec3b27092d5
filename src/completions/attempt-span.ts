import type { Span } from '../ops/trace.js'
import type { Adapter, Usage, WireRequest } from './call.js'

// An upstream attempt's span, when the request is traced: a child of the request's, named and described as the
// OpenTelemetry GenAI semantic conventions say (`chat <model>`, gen_ai.*). Its traceparent goes upstream with the
// attempt. It ends with the attempt, or for a streamed answer with the stream (stream.ts), when the counts are known.

export function attemptSpan(parent: Span, adapter: Adapter, wire: WireRequest, n: number): Span {
  const span = parent.child(`chat ${wire.model}`)
  span.set('gen_ai.operation.name', 'chat')
  span.set('gen_ai.system', adapter.name)
  span.set('gen_ai.request.model', wire.model)
  span.set('studio.attempt', n)
  return span
}

// What the upstream answered: its model, token counts and why it stopped.
export function answered(span: Span, a: { model: string; stop_reason: string | null; usage: Usage }) {
  if (a.model) span.set('gen_ai.response.model', a.model)
  span.set('gen_ai.usage.input_tokens', a.usage.input_tokens)
  span.set('gen_ai.usage.output_tokens', a.usage.output_tokens)
  if (a.stop_reason !== null) span.set('gen_ai.response.finish_reasons', [a.stop_reason])
}
