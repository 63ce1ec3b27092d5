import { COMPLETION, type CompletionRequest } from './schemas.js'

// A request the CompletionRequest schema accepts, checked by hand: what the schema's parse returns for it (the same
// fields, defaults and key order, new objects), or undefined for anything else, which the schema then checks and
// words the errors for. It accepts nothing the schema refuses (test/completion-request.test.ts holds it to that); it
// exists because the schema's run allocates a dataset per field of every call.

const { maxText: MAX_TEXT, maxMessages, maxTokens, defaultMaxTokens } = COMPLETION
const KEYS = new Set(['messages', 'model', 'system', 'max_tokens', 'temperature'])

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x)
const goodText = (s: unknown, min: number): s is string =>
  typeof s === 'string' && s.length >= min && s.length <= MAX_TEXT && !s.includes('\u0000') && s.isWellFormed()

function messagesOf(list: unknown): CompletionRequest['messages'] | undefined {
  if (!Array.isArray(list) || list.length < 1 || list.length > maxMessages) return undefined
  const out: CompletionRequest['messages'] = new Array(list.length)
  for (let i = 0; i < list.length; i++) {
    const m = list[i]
    if (!isRecord(m)) return undefined
    let n = 0
    for (const _ in m) n++
    const { role, content } = m
    if (n !== 2 || (role !== 'user' && role !== 'assistant') || !goodText(content, 1)) return undefined
    out[i] = { role, content }
  }
  return out
}

export function acceptCompletionRequest(input: unknown): CompletionRequest | undefined {
  if (!isRecord(input)) return undefined
  for (const k in input) if (!KEYS.has(k)) return undefined
  const messages = messagesOf(input.messages)
  if (!messages) return undefined
  const { model = 'primary', system, max_tokens = defaultMaxTokens, temperature } = input
  if (model !== 'primary' && model !== 'fast') return undefined
  if (!(typeof max_tokens === 'number' && Number.isInteger(max_tokens) && max_tokens >= 1 && max_tokens <= maxTokens))
    return undefined
  const out: Record<string, unknown> = { messages, model }
  if ('system' in input) {
    if (!goodText(system, 0)) return undefined
    out.system = system
  }
  out.max_tokens = max_tokens
  if ('temperature' in input) {
    if (!(typeof temperature === 'number' && temperature >= 0 && temperature <= 1)) return undefined
    out.temperature = temperature
  }
  return out as CompletionRequest
}
