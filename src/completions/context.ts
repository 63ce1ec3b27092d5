import type { Exchange } from '../http/route.js'
import type { QuotaTicket } from '../quota/ticket-pair.js'
import type { CompletionRequest } from '../api/schemas.js'
import type { CallOptions } from './call.js'
import type { CompletionsDeps } from './completions.js'
import type { Try } from './fallback.js'

// One completion under way: the exchange, the services it needs (made once at start), and what it holds for its
// whole life: its quota ticket, the call's options with its abort, every attempt so far. complete.ts makes it once
// per request; each step of the operation (complete.ts, stream-complete.ts, call-record.ts) is a function over it.
export interface CompletionContext {
  deps: CompletionsDeps
  x: Exchange<CompletionRequest>
  ticket: QuotaTicket
  opts: CallOptions
  tries: Try[]
  // The first upstream's model for the alias: the record's, until an upstream answers.
  upstreamModel: string
  // When the upstream call began (after the ticket's commit, when the call waited for it).
  t0: number
}
