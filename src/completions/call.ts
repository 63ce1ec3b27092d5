import type { Transport } from '../ops/transport.js'
import { type ApiError, ExpectedError } from '../http/errors.js'
import type { Config } from '../ops/config.js'
import type { Span } from '../ops/trace.js'
import type { Logger } from '../ops/log.js'
import type { CallAbort } from './abort.js'
import type { Streamed, UpstreamStream } from './stream.js'

// What an upstream call is: the call, the adapter that puts it on the wire of one upstream protocol, the answer and
// the failure, whatever the protocol.

// `primary`, `fast`, or one of STUDIO_MODEL_ALIASES.
export type Alias = string

// The upstream protocols, which are also the callers' (the OpenAI- and Anthropic-compatible routes).
export type Protocol = 'openai' | 'anthropic'

// Either kind of call, before an upstream's model is chosen for it.
export type CallBody = Omit<CompletionCall, 'model'> | Omit<ProtocolCall, 'model'>

// A call made in a caller's protocol: its body for each upstream protocol the call may reach (as the caller sent it
// for its own, translated for the other), each sent with only `model` rewritten to the upstream's.
export interface ProtocolCall {
  model: string
  bodies: Partial<Record<Protocol, Record<string, unknown>>>
}

export interface CompletionCall {
  model: string
  messages: { role: 'user' | 'assistant'; content: string }[]
  system?: string
  max_tokens: number
  temperature?: number
  stream?: boolean
}

export interface Usage {
  input_tokens: number
  output_tokens: number
  cache_read_input_tokens: number
  cache_creation_input_tokens: number
}

interface Completion {
  model: string
  content: string
  stop_reason: string | null
  usage: Usage
}

export interface WireRequest {
  path: string
  headers: Record<string, string>
  body: string
  // The upstream model asked for (in the body too).
  model: string
}

// One adapter per upstream wire format: how to ask, how to read the answer, how to read an error.
export interface Adapter {
  name: string
  // The wire protocol it speaks (the anthropic and openai adapters' own; echo's is openai).
  protocol: Protocol
  origin: string
  // Its own transport in place of the call's dispatcher: echo's, in-process, with no socket.
  transport?: Transport
  models: Record<Alias, string>
  notConfigured: string | null
  requestIdHeader: string
  // Where its calls go and with which headers (a ProtocolCall's body goes there as it is).
  endpoint: { path: string; headers: Record<string, string> }
  request(call: CompletionCall): WireRequest
  parse(body: unknown): Completion
  // One event of a streamed answer, read into `into`: the text it adds ('' for none), or null for an event that is
  // not part of the answer (a ping). Throws an UpstreamStreamError for the upstream's error event.
  readEvent(type: string, data: string, into: Streamed): string | null
  errorMessage(body: unknown): string | null
  spendLimit(status: number, body: unknown): boolean
}

export interface Attempted {
  // null for a streamed call: its stream carries the answer.
  completion: Completion | null
  // The upstream's answer as it sent it (a whole answer's), in `protocol`, for a caller in its own protocol.
  body?: unknown
  protocol: Protocol
  requestId: string | null
  attempts: number
}

// How one call is made: through which dispatcher, within how long, until which controller aborts it.
export interface CallOptions {
  dispatcher: Transport
  timeoutMs: number
  abort: CallAbort
  retries?: number
  backoff?: (attempt: number, retryAfterS: number | null) => number
  // Where an upstream's refusal of our credentials is logged.
  log?: Logger
  // Told of each attempt as it ends: its failure (null: it answered) and how long it took.
  onAttempt?: (failure: unknown, ms: number) => void
  // A streamed call: each attempt's 2xx body goes to it, and the attempt ends at its first event.
  stream?: UpstreamStream
  // The request's span, when tracing is on: each attempt is a child of it.
  span?: Span
}

// What a failed call's record says: its outcome (the completions table's), its attempts, and the last answer's request
// id and status when there was an answer.
interface FailureRecord {
  outcome: string
  attempts: number
  requestId?: string | null
  status?: number | null
}

// A failed upstream call: `api` is what the caller gets; `outcome` what the completions table records.
export class UpstreamFailure extends ExpectedError {
  readonly outcome: string
  readonly attempts: number
  readonly requestId: string | null
  readonly status: number | null

  constructor(
    readonly api: ApiError,
    { outcome, attempts, requestId = null, status = null }: FailureRecord
  ) {
    super(api.message)
    this.outcome = outcome
    this.attempts = attempts
    this.requestId = requestId
    this.status = status
  }
}

export type UpstreamConfig = Pick<
  Config,
  | 'STUDIO_UPSTREAM'
  | 'ANTHROPIC_API_KEY'
  | 'ANTHROPIC_BASE_URL'
  | 'OPENAI_BASE_URL'
  | 'OPENAI_API_KEY'
  | 'STUDIO_MODEL_PRIMARY'
  | 'STUDIO_MODEL_FAST'
  | 'STUDIO_MODEL_ALIASES'
>

export const int = (n: unknown) =>
  typeof n === 'number' && Number.isInteger(n) && n >= 0 ? Math.min(n, 2 ** 31 - 1) : 0

// What goes on the wire for a call: a ProtocolCall's body for the upstream's protocol with the upstream's model, or
// the native call as the adapter writes it.
export function wireOf(adapter: Adapter, call: CompletionCall | ProtocolCall): WireRequest {
  if (!('bodies' in call)) return adapter.request(call)
  const body = call.bodies[adapter.protocol]
  if (!body) throw new Error(`no ${adapter.protocol} body prepared for this call`)
  const { path, headers } = adapter.endpoint
  return { path, headers, body: JSON.stringify({ ...body, model: call.model }), model: call.model }
}

// An adapter's models: `primary` and `fast`, and its model for each alias the operator named.
export function modelsOf(config: UpstreamConfig, name: Protocol, primary: string, fast: string) {
  const models: Record<Alias, string> = {
    primary: config.STUDIO_MODEL_PRIMARY ?? primary,
    fast: config.STUDIO_MODEL_FAST ?? fast,
  }
  for (const [alias, byUpstream] of Object.entries(config.STUDIO_MODEL_ALIASES ?? {}))
    if (byUpstream[name] !== undefined) models[alias] = byUpstream[name]
  return models
}

export function splitBase(url: string): { origin: string; prefix: string } {
  const u = new URL(url)
  return { origin: u.origin, prefix: u.pathname.replace(/\/+$/, '') }
}
