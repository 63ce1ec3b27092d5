import type { RawResult } from './core.js'
import { ServerError, StudioError } from './errors.js'
import type { components } from './openapi.js'
import { readSse } from './sse.js'

type Schemas = components['schemas']

/** One event of a streamed completion: a piece of text, or the whole completion, once and last. */
export type CompletionStreamEvent =
  | { type: 'delta'; data: Schemas['CompletionDelta'] }
  | { type: 'done'; data: Schemas['CompletionResponse'] }

/**
 * A streamed completion (`stream: true`), read with `for await`. Leaving the loop early closes the connection. An
 * `error` event is thrown as a `ServerError` (its `code` from the Error body); so is a stream that ends without
 * `done`. `finalCompletion()` is the `done` event's completion.
 */
export class CompletionStream implements AsyncIterable<CompletionStreamEvent> {
  readonly #raw: Promise<RawResult<unknown>>
  readonly #final: Promise<Schemas['CompletionResponse']>
  #settle: { ok: (c: Schemas['CompletionResponse']) => void; fail: (e: unknown) => void } | undefined
  #started = false

  constructor(raw: Promise<RawResult<unknown>>) {
    this.#raw = raw
    raw.catch(() => {})
    this.#final = new Promise((ok, fail) => {
      this.#settle = { ok, fail }
    })
    this.#final.catch(() => {})
  }

  /** The response (status, headers) once the first event came. */
  response(): Promise<Response> {
    return this.#raw.then((r) => r.response)
  }

  /** Reads the stream to its end, unless a loop reads it, and resolves to the `done` event's completion. */
  async finalCompletion(): Promise<Schemas['CompletionResponse']> {
    if (!this.#started) for await (const _ of this);
    return this.#final
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<CompletionStreamEvent> {
    if (this.#started) throw new StudioError({ message: 'A stream can be read once' })
    this.#started = true
    let ended = false
    let close: (() => void) | undefined
    try {
      const raw = await this.#raw
      const response = raw.response
      close = raw.close
      for await (const e of readSse(response.body!)) {
        const data = JSON.parse(e.data)
        if (e.event === 'delta') yield { type: 'delta', data }
        else if (e.event === 'done') {
          ended = true
          this.#settle?.ok(data)
          yield { type: 'done', data }
          return
        } else if (e.event === 'error') throw streamError(data, response.headers)
      }
      throw new ServerError({ message: 'The stream ended without its last event', headers: response.headers })
    } catch (e) {
      ended = true
      this.#settle?.fail(e)
      throw e
    } finally {
      if (!ended) {
        // Cancelling the body alone may leave the connection open; aborting the request closes it.
        close?.()
        this.#settle?.fail(new StudioError({ message: 'The stream was closed before its last event' }))
      }
    }
  }
}

function streamError(
  body: { error?: { code?: string; message?: string; details?: Record<string, unknown> } },
  headers: Headers
) {
  const error = body.error ?? {}
  return new ServerError({
    code: error.code,
    message: error.message ?? 'The stream failed',
    details: error.details,
    headers,
  })
}
