import { CompletionStream } from './completion-stream.js'
import { type RawResult, type Request, type RequestOptions, send, type Transport } from './core.js'
import { StudioError } from './errors.js'
import type { components } from './openapi.js'

type Schemas = components['schemas']
export type Caller = Schemas['Caller']
export type CompletionRequest = Schemas['CompletionRequest']
export type CompletionResponse = Schemas['CompletionResponse']
export type LeadInput = Schemas['LeadInput']
export type LeadCreated = Schemas['LeadCreated']
export type Lead = Schemas['Lead']
export type LeadPage = Schemas['LeadPage']
export type LeadUpdate = Schemas['LeadUpdate']
export type LeadNote = Schemas['LeadNote']
export type OpenApiDocument = Schemas['OpenApiDocument'] & Record<string, unknown>

/** A result: the response body, with the response's `x-request-id` as `_request_id`. */
export type WithRequestId<T> = T & { _request_id: string | null }

export interface ClientOptions {
  /** Default `process.env.STUDIO_API_KEY`. */
  apiKey?: string
  /** Default `process.env.STUDIO_BASE_URL`, else `http://127.0.0.1:8080/api/v1`. */
  baseURL?: string
  /** Retries after the first attempt; default 2. */
  maxRetries?: number
  /** Milliseconds for each attempt; default 60 000. */
  timeout?: number
  /** A fetch implementation; default the platform's `fetch`. */
  fetch?: typeof fetch
  /** Headers sent with every request. */
  defaultHeaders?: Record<string, string>
}

export interface LeadOptions extends RequestOptions {
  /** Default a random UUID, the same on every retry of the call. */
  idempotencyKey?: string
}

export interface LeadListQuery {
  /** Leads a page, 1 to 100; default 50. */
  limit?: number
  /** Start after this page's `next_cursor` instead of at the newest lead. */
  cursor?: string
  /** Only leads created at or after this time (ISO 8601). */
  since?: string
  /** Only leads created before this time (ISO 8601). */
  until?: string
  status?: Lead['status']
  /** Only leads given to the user with this email. */
  assignee?: string
  /** The leads kept as spam instead of the others. */
  spam?: boolean
}

/** The promise of a result; `withResponse()` also gives the raw `Response` (status, headers). */
export class APIPromise<T> implements PromiseLike<WithRequestId<T>> {
  readonly #raw: Promise<RawResult<T>>
  constructor(raw: Promise<RawResult<T>>) {
    this.#raw = raw
    raw.catch(() => {})
  }
  withResponse(): Promise<RawResult<WithRequestId<T>>> {
    return this.#raw.then((r) => ({ ...r, data: withId(r.data, r.requestId) }))
  }
  asResponse(): Promise<Response> {
    return this.#raw.then((r) => r.response)
  }
  // biome-ignore lint/suspicious/noThenProperty: an APIPromise is awaited like the promise it stands for
  then<A = WithRequestId<T>, B = never>(
    onFulfilled?: ((value: WithRequestId<T>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null
  ): Promise<A | B> {
    return this.#raw.then((r) => withId(r.data, r.requestId)).then(onFulfilled, onRejected)
  }
  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null) {
    return this.then(undefined, onRejected)
  }
  finally(onFinally?: (() => void) | null) {
    return this.then().finally(onFinally)
  }
}

function withId<T>(data: T, requestId: string | null): WithRequestId<T> {
  const target = (data !== null && typeof data === 'object' ? data : {}) as WithRequestId<T>
  Object.defineProperty(target, '_request_id', { value: requestId, enumerable: false })
  return target
}

const env = (name: string): string | undefined =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name]

function uuid(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto
  if (c?.randomUUID) return c.randomUUID()
  const hex = Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16))
  hex[12] = '4'
  hex[16] = ((Number.parseInt(hex[16], 16) & 3) | 8).toString(16)
  return hex.join('').replace(/(.{8})(.{4})(.{4})(.{4})(.{12})/, '$1-$2-$3-$4-$5')
}

export class Studio {
  readonly baseURL: string
  readonly maxRetries: number
  readonly timeout: number
  readonly #transport: Transport

  constructor(options: ClientOptions = {}) {
    const apiKey = options.apiKey ?? env('STUDIO_API_KEY')
    if (!apiKey) throw new StudioError({ message: 'No API key: pass { apiKey } or set STUDIO_API_KEY' })
    this.baseURL = (options.baseURL ?? env('STUDIO_BASE_URL') ?? 'http://127.0.0.1:8080/api/v1').replace(/\/+$/, '')
    this.maxRetries = options.maxRetries ?? 2
    this.timeout = options.timeout ?? 60_000
    const f = options.fetch ?? globalThis.fetch
    this.#transport = {
      apiKey,
      baseURL: this.baseURL,
      maxRetries: this.maxRetries,
      timeout: this.timeout,
      fetch: (input, init) => f(input, init),
      defaultHeaders: options.defaultHeaders ?? {},
    }
  }

  #call<T>(req: Request, options?: RequestOptions) {
    return new APIPromise(send(this.#transport, req, options) as Promise<RawResult<T>>)
  }

  /** `GET /me`: the caller's user, plan and monthly quota. */
  me(options?: RequestOptions) {
    return this.#call<Caller>({ method: 'GET', path: '/me' }, options)
  }

  /** `GET /openapi.json`: the OpenAPI 3.1 document of the API. */
  openapi(options?: RequestOptions) {
    return this.#call<OpenApiDocument>({ method: 'GET', path: '/openapi.json' }, options)
  }

  readonly completions = {
    /** `POST /ai/completions`: a non-streaming completion. */
    create: (body: CompletionRequest, options?: RequestOptions) =>
      this.#call<CompletionResponse>({ method: 'POST', path: '/ai/completions', body }, options),
    /**
     * `POST /ai/completions` with `stream: true`: its events as they come. Retries (and `timeout`) apply up to the
     * first event; what fails before it rejects as `create` would.
     */
    stream: (body: Omit<CompletionRequest, 'stream'>, options?: RequestOptions) =>
      new CompletionStream(
        send(
          this.#transport,
          { method: 'POST', path: '/ai/completions', body: { ...body, stream: true }, stream: true },
          options
        )
      ),
  }

  readonly leads = {
    /** `POST /leads`: creates a lead once, however many retries it takes (one Idempotency-Key for all). */
    create: (body: LeadInput, options: LeadOptions = {}) => {
      const { idempotencyKey = uuid(), ...rest } = options
      const headers = { 'idempotency-key': idempotencyKey }
      return this.#call<LeadCreated>({ method: 'POST', path: '/leads', body, headers }, rest)
    },
    /**
     * `GET /leads`: the account's leads, newest first, as an async iterator over pages (`for await (const page of
     * studio.leads.list())`); each page is fetched when the previous one has been taken, following `next_cursor`.
     */
    list: (query: LeadListQuery = {}, options?: RequestOptions) => this.#pages(query, options),
    /** `PATCH /leads/{id}`: changes its status or assignee (an email, or null), and answers the lead. */
    update: (id: string, body: LeadUpdate, options?: RequestOptions) =>
      this.#call<Lead>({ method: 'PATCH', path: `/leads/${encodeURIComponent(id)}`, body }, options),
    /** `POST /leads/{id}/notes`: appends a note (1 to 10,000 characters) to the lead. */
    addNote: (id: string, text: string, options?: RequestOptions) =>
      this.#call<LeadNote>({ method: 'POST', path: `/leads/${encodeURIComponent(id)}/notes`, body: { text } }, options),
    /** `GET /leads/{id}`: one lead. */
    get: (id: string, options?: RequestOptions) =>
      this.#call<Lead>({ method: 'GET', path: `/leads/${encodeURIComponent(id)}` }, options),
  }

  async *#pages(query: LeadListQuery, options?: RequestOptions): AsyncGenerator<WithRequestId<LeadPage>> {
    let cursor = query.cursor
    do {
      const params = new URLSearchParams()
      for (const [name, value] of Object.entries({ ...query, cursor }))
        if (value !== undefined) params.set(name, String(value))
      const search = params.size ? `?${params}` : ''
      const page = await this.#call<LeadPage>({ method: 'GET', path: `/leads${search}` }, options)
      yield page
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
  }
}
