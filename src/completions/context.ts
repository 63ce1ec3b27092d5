import type { ApiError } from '../http/errors.js'
import type { Exchange } from '../http/route.js'
import type { SseEvent } from '../protocols/sse-events.js'
import type { QuotaTicket } from '../quota/ticket-pair.js'
import type { Alias, CallOptions, Protocol } from './call.js'
import type { CompletionsDeps } from './completions.js'
import type { Try } from './fallback.js'
import type { BudgetHold } from './budget.js'
import type { TokenHold } from '../limits/tokens.js'

// One completion under way: the exchange, the services it needs (made once at start), and what it holds for its
// whole life: its quota ticket, the call's options with its abort, every attempt so far. complete.ts makes it once
// per request; each step of the operation (complete.ts, stream-complete.ts, call-record.ts) is a function over it.
export interface CompletionContext {
  deps: CompletionsDeps
  x: Exchange
  // The model alias the caller named.
  alias: Alias
  // How a caller of the OpenAI- or Anthropic-compatible routes is answered; absent for the native route.
  caller?: CallerProtocol
  ticket: QuotaTicket
  // What it holds of the account's budget (released with its record).
  budget: BudgetHold
  // What it holds of its key's tokens per minute (tokens-per-minute.ts), settled by its record; null: no limit.
  tokens?: TokenHold | null
  opts: CallOptions
  tries: Try[]
  // The first upstream's model for the alias: the record's, until an upstream answers.
  upstreamModel: string
  // When the upstream call began (after the ticket's commit, when the call waited for it).
  t0: number
}

// One upstream event (its SSE name and data) → the events the caller reads, in the caller's protocol.
export interface Relay {
  push(type: string, data: string): SseEvent[]
}

// A caller's protocol: its whole answer from an upstream body in `protocol`, a stream's relay for the protocol of the
// upstream an attempt goes to, and a failure after its stream began as the protocol's error event.
export interface CallerProtocol {
  whole(protocol: Protocol, body: unknown): unknown
  relay(protocol: Protocol): Relay
  errorEvent(e: ApiError): string
}
