import type { Sql } from '../storage/db.js'
import { ApiError } from '../http/errors.js'
import type { Month } from '../quota/month.js'
import { usd } from '../ops/usd.js'
import type { CallBody } from './call.js'
import type { Prices } from './prices.js'

// What a call holds of its account's and its key's monthly budgets (sql/041, sql/047): the micro-dollars reserved
// before its upstream call, released with its record (record-writer.ts), or given back when it ends without one.
// `micros` (the account's) and `keyMicros` (held under the key line's newest key, `line`) 0: nothing held there.
export interface BudgetHold {
  accountId: string
  month: string
  micros: number
  keyMicros: number
  line: string
  // Its record was written (or is queued): the record releases the hold.
  recorded: boolean
}

export interface Budgets {
  // Reserves the call's upper bound, or throws 429 budget_exceeded (or 503 for a model with no price) before any
  // upstream call.
  reserve(accountId: string, key: string, month: Month, bound: Bound): Promise<BudgetHold>
  // A hold whose call wrote no record goes back.
  giveBack(hold: BudgetHold): Promise<void>
}

// A call's upper bound: its micro-dollars at the dearest price of every model it may reach, or the model with no price.
// `part`: a member whose tokens its body does not bound (`unboundedPartOf`).
type Bound = { micros: number } | { unpriced: string } | { unbounded: true } | { part: UnboundedPart }

// A call with no budget to count (none set on its account or key, as its cached principal says): no round trip.
export const noHold = (accountId: string, month: Month): BudgetHold => ({
  accountId,
  month: month.month,
  micros: 0,
  keyMicros: 0,
  line: '',
  recorded: false,
})

interface Reserved {
  granted: boolean
  held: string
  key_held: string
  line: string | null
  which: 'account' | 'key' | null
  budget: string | null
  spent: string
  reserved: string
  alive: boolean
}

// One call waiting for its reservation: its micro-dollars, and how it learns its row.
interface Waiting {
  micros: number
  done: (r: Reserved) => void
  failed: (e: unknown) => void
}

// The calls of one key (and month) waiting while its reservation runs: they go together in the next statement.
interface Line {
  waiting: Waiting[]
  running: boolean
}

const MAX_BATCH = 1000

// `mail`: the server sends mail, so a refusal that exhausts the account's budget mails its owners (sql/047).
// Reservations batch per key, as the quota's units batch per account (quota/account-quota.ts): a key's first call
// reserves at once; the calls that arrive while that statement runs wait for it and go together in the next one,
// so a busy key costs one round trip per batch, not per call, and the budget's row lock is taken once per batch.
export function createBudgets(sql: Sql, process: string, mail = false): Budgets {
  const lines = new Map<string, Line>()

  async function run(name: string, line: Line, accountId: string, key: string, month: string) {
    line.running = true
    while (line.waiting.length) {
      const batch = line.waiting.splice(0, MAX_BATCH)
      try {
        const rows = await sql<(Reserved & { ord: number })[]>`
          select ord, granted, held::text, key_held::text, line, which, budget::text, spent::text, reserved::text, alive
          from studio_budget_reserve_keys(${accountId}, ${key}, ${month}::date, ${process},
            ${batch.map((w) => w.micros)}::bigint[], ${mail})`
        for (const r of rows) batch[r.ord - 1].done(r)
      } catch (e) {
        for (const w of batch) w.failed(e)
      }
    }
    line.running = false
    lines.delete(name)
  }

  function reserved(accountId: string, key: string, month: string, micros: number): Promise<Reserved> {
    const name = `${accountId} ${key} ${month}`
    let line = lines.get(name)
    if (!line) lines.set(name, (line = { waiting: [], running: false }))
    const l = line
    return new Promise<Reserved>((done, failed) => {
      l.waiting.push({ micros, done, failed })
      if (!l.running) void run(name, l, accountId, key, month)
    })
  }

  return {
    async reserve(accountId, key, month, bound) {
      const micros = 'micros' in bound ? bound.micros : 0
      const r = await reserved(accountId, key, month.month, micros)
      const hold = {
        accountId,
        month: month.month,
        micros: Number(r.held),
        keyMicros: Number(r.key_held),
        line: r.line ?? key,
        recorded: false,
      }
      if (r.budget === null) return hold
      if ('unpriced' in bound) {
        await this.giveBack(hold)
        throw new ApiError({
          code: 'ai_not_configured',
          message:
            `This account or key has a budget, and the model ${bound.unpriced} has no price: ` +
            'add it to the file named by STUDIO_PRICES',
        })
      }
      if ('unbounded' in bound) {
        await this.giveBack(hold)
        throw new ApiError({
          code: 'invalid_request',
          message: 'max_tokens: required when the account or key has a budget',
        })
      }
      if ('part' in bound) {
        await this.giveBack(hold)
        throw unboundedRefusal(bound.part, 'this account or key has a budget')
      }
      if (!r.alive)
        throw new ApiError({ code: 'service_unavailable', message: 'The budget could not be counted; try again later' })
      if (!r.granted) throw budgetExceeded(r, month, Date.now())
      return hold
    },
    async giveBack(hold) {
      if ((hold.micros === 0 && hold.keyMicros === 0) || hold.recorded) return
      hold.recorded = true
      if (hold.micros > 0)
        await sql`select studio_budget_give(${hold.accountId}, ${hold.month}::date, ${process}, ${hold.micros})`
      if (hold.keyMicros > 0)
        await sql`select studio_budget_give_key(${hold.line}, ${hold.month}::date, ${process}, ${hold.keyMicros})`
    },
  }
}

// `budget` in the details names which budget refused the call: the account's or the key's.
const budgetExceeded = (r: Reserved, month: Month, now: number) =>
  new ApiError({
    code: 'budget_exceeded',
    message: `The monthly budget of this ${r.which === 'key' ? 'key' : 'account'} does not fit this call; it resets at ${month.end.toISOString()}`,
    details: {
      which: r.which ?? 'account',
      budget: usd(r.budget ?? 0),
      spent: usd(r.spent),
      reserved: usd(r.reserved),
      resets_at: month.end.toISOString(),
    },
    headers: { 'retry-after': String(Math.max(1, Math.ceil((month.end.getTime() - now) / 1000))) },
  })

// The most a call can cost (docs/spend.md): its input tokens bounded by the UTF-8 bytes of its body as JSON (a token
// is at least one byte of text; the JSON's quotes and keys cover each message's few tokens of framing), each at the
// dearest of the input, cache-read and cache-write prices, plus its max_tokens at the output price; the dearest of
// the models its fallback may reach. A call with no max_tokens, a document or a server tool, cannot be bounded: 422.
export function upperBound(prices: Prices, models: string[], call: CallBody): Bound {
  const part = unboundedPartOf(call)
  if (part) return { part }
  const { input, output } = tokensOf(call)
  let micros = 0
  for (const model of models) {
    const p = prices.of(model)
    if (!p) return { unpriced: model }
    if (typeof output !== 'number') return { unbounded: true }
    const pico =
      input * Math.round(Math.max(p.input, p.cache_read, p.cache_write) * 1e6) + output * Math.round(p.output * 1e6)
    micros = Math.max(micros, Math.ceil(pico / 1e6))
  }
  return { micros }
}

// What one image may cost in input tokens, at most: an image given by URL is a few bytes of JSON but is counted by
// its pixels upstream (Anthropic about 1,600 at most, OpenAI's models up to about 2,500; docs/spend.md).
const IMAGE_TOKENS_MAX = 5_000
const IMAGE_PARTS = new Set(['image', 'image_url', 'input_image'])

// The image parts of a body, at any depth (messages, tool results).
function imagesIn(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + imagesIn(v), 0)
  if (value === null || typeof value !== 'object') return 0
  const own = IMAGE_PARTS.has((value as { type?: unknown }).type as string) ? 1 : 0
  return Object.values(value).reduce((n: number, v) => n + imagesIn(v), own)
}

// A document read from a file (a PDF by URL, by file id or as base64 data) is counted upstream by its pages, text and
// images, which neither its URL nor its bytes bound (a page of a few hundred bytes can be thousands of tokens): an
// Anthropic `document` but one whose source is its text or content blocks (bounded as any JSON), and an OpenAI file.
// A `container_upload` is a file code execution reads upstream, as unbounded.
const FILE_PARTS = new Set(['file', 'input_file'])
const INLINE_DOCUMENT_SOURCES = new Set(['text', 'content'])

// What of a call its body does not bound, and why, for the refusal's message.
const UNBOUNDED = {
  document: {
    what: "a document or file's tokens",
    why: 'the upstream counts its pages',
    instead: 'send its text as text, or ',
  },
  upload: { what: "a container upload's tokens", why: 'the upstream reads the file', instead: '' },
  'server tool': { what: "a server tool's tokens", why: 'its results become input upstream', instead: '' },
} as const
interface UnboundedPart {
  at: string
  kind: keyof typeof UNBOUNDED
}

function unboundedKindOf(part: unknown): UnboundedPart['kind'] | null {
  if (part === null || typeof part !== 'object') return null
  const { type, source } = part as { type?: unknown; source?: { type?: unknown } }
  if (type === 'document') return INLINE_DOCUMENT_SOURCES.has(source?.type as string) ? null : 'document'
  if (type === 'container_upload') return 'upload'
  return FILE_PARTS.has(type as string) ? 'document' : null
}

// The first such part among the parts of `content`, or of a tool result's content in it.
function unboundedPartIn(content: unknown, at: string): UnboundedPart | null {
  if (!Array.isArray(content)) return null
  for (const [j, part] of content.entries()) {
    const kind = unboundedKindOf(part)
    if (kind) return { at: `${at}[${j}]`, kind }
    const inResult = unboundedPartIn((part as { content?: unknown } | null)?.content, `${at}[${j}].content`)
    if (inResult) return inResult
  }
  return null
}

// A tool the upstream runs itself (Anthropic's `web_search_…`, `web_fetch_…`, `code_execution_…`: any `type` but
// `custom`; OpenAI's client tools are `function` or `custom`), whose results the upstream adds to the input.
const CLIENT_TOOLS = new Set(['custom', 'function'])

function serverToolIn(body: { tools?: unknown; web_search_options?: unknown }): UnboundedPart | null {
  if (body.web_search_options != null) return { at: 'web_search_options', kind: 'server tool' }
  if (!Array.isArray(body.tools)) return null
  const i = body.tools.findIndex((tool) => {
    const type = (tool as { type?: unknown } | null)?.type
    return type != null && !CLIENT_TOOLS.has(type as string)
  })
  return i < 0 ? null : { at: `tools[${i}]`, kind: 'server tool' }
}

// The call's first member whose tokens its body does not bound (null: none), in the body the bound reckons (the
// caller's own: a document or server tool never crosses protocols, to-openai.ts and to-anthropic.ts refuse it).
export function unboundedPartOf(call: CallBody): UnboundedPart | null {
  const body = bodyOf(call) as { messages?: unknown; tools?: unknown; web_search_options?: unknown }
  const tool = serverToolIn(body)
  if (tool) return tool
  if (!Array.isArray(body.messages)) return null
  for (const [i, message] of body.messages.entries()) {
    const part = unboundedPartIn((message as { content?: unknown } | null)?.content, `messages[${i}].content`)
    if (part) return part
  }
  return null
}

// The refusal of such a member where a limit needs the call's bound (`limit` says which); with none it goes through.
export const unboundedRefusal = ({ at, kind }: UnboundedPart, limit: string) => {
  const { what, why, instead } = UNBOUNDED[kind]
  return new ApiError({
    code: 'invalid_request',
    message:
      `${at}: ${what} cannot be bounded before the upstream call (${why}), and ${limit}; ${instead}call with no ` +
      'budget or tokens-per-minute limit',
    details: { refused: [at] },
  })
}

const bodyOf = (call: CallBody): object => ('bodies' in call ? (Object.values(call.bodies)[0] ?? {}) : call)

// A call's tokens at most, as the budget's bound reckons them: its input bounded by its body's UTF-8 bytes as JSON
// plus IMAGE_TOKENS_MAX per image, and its max_tokens (not a number: the call cannot be bounded).
function tokensOf(call: CallBody): { input: number; output: unknown } {
  const body = bodyOf(call)
  const b = body as { max_tokens?: unknown; max_completion_tokens?: unknown }
  const input = Buffer.byteLength(JSON.stringify(body)) + imagesIn(body) * IMAGE_TOKENS_MAX
  return { input, output: b.max_tokens ?? b.max_completion_tokens }
}

// The most tokens a call can use (input plus output), reckoned as `upperBound` does; null without max_tokens.
export function tokenBound(call: CallBody): number | null {
  const { input, output } = tokensOf(call)
  return typeof output === 'number' ? input + output : null
}
