import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import t from 'tap'
import { ApiError, type ErrorCode, statusOf } from '../../src/http/errors.js'
import { AnthropicStreamFromOpenAI } from '../../src/protocols/anthropic-stream.js'
import {
  anthropicErrorBody,
  anthropicErrorType,
  anthropicStreamError,
  openaiErrorBody,
  openaiErrorType,
  openaiStreamError,
  untranslatable,
} from '../../src/protocols/errors.js'
import { OpenAIStreamFromAnthropic } from '../../src/protocols/openai-stream.js'
import { sseText } from '../../src/protocols/sse-events.js'
import { json } from '../support/fake-upstream.js'
import { sdks, sseBody } from './sdks.js'

// Our errors in each protocol's body: the SDKs raise their own typed errors with our code, whole and mid-stream.

const error = (code: ErrorCode, message = `${code} happened`) => new ApiError({ code, message })

const ask = {
  openai: (client: OpenAI) =>
    client.chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'x' }] }),
  anthropic: (client: Anthropic) =>
    client.messages.create({ model: 'fast', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
}

t.test('happy: every code has a type in each protocol', async (t) => {
  const table = Object.fromEntries(
    (Object.keys(statusOf) as ErrorCode[]).map((code) => [
      code,
      [openaiErrorType(error(code)), anthropicErrorType(error(code))],
    ])
  )
  t.match(table, {
    unauthorized: ['authentication_error', 'authentication_error'],
    forbidden: ['permission_error', 'permission_error'],
    not_found: ['not_found_error', 'not_found_error'],
    bad_request: ['invalid_request_error', 'invalid_request_error'],
    invalid_request: ['invalid_request_error', 'invalid_request_error'],
    payload_too_large: ['invalid_request_error', 'request_too_large'],
    rate_limited: ['rate_limit_error', 'rate_limit_error'],
    quota_exceeded: ['insufficient_quota', 'rate_limit_error'],
    internal_error: ['server_error', 'api_error'],
    upstream_unavailable: ['server_error', 'api_error'],
    upstream_timeout: ['server_error', 'timeout_error'],
  })
  t.equal(anthropicErrorType({ status: 529, code: 'upstream_unavailable', message: 'busy' }), 'overloaded_error')
})

type ErrorClass = abstract new (...args: never) => Error
const cases: [ErrorCode | 529, ErrorClass, ErrorClass][] = [
  ['unauthorized', OpenAI.AuthenticationError, Anthropic.AuthenticationError],
  ['forbidden', OpenAI.PermissionDeniedError, Anthropic.PermissionDeniedError],
  ['not_found', OpenAI.NotFoundError, Anthropic.NotFoundError],
  ['bad_request', OpenAI.BadRequestError, Anthropic.BadRequestError],
  ['invalid_request', OpenAI.UnprocessableEntityError, Anthropic.UnprocessableEntityError],
  ['rate_limited', OpenAI.RateLimitError, Anthropic.RateLimitError],
  ['quota_exceeded', OpenAI.RateLimitError, Anthropic.RateLimitError],
  ['internal_error', OpenAI.InternalServerError, Anthropic.InternalServerError],
  ['payload_too_large', OpenAI.APIError, Anthropic.ContentTooLargeError],
  ['upstream_unavailable', OpenAI.InternalServerError, Anthropic.ServiceUnavailableError],
  ['upstream_timeout', OpenAI.InternalServerError, Anthropic.GatewayTimeoutError],
  [529, OpenAI.InternalServerError, Anthropic.OverloadedError],
]

t.test('error: each SDK raises its own typed error, with our code', async (t) => {
  const { server, openai, anthropic } = await sdks(t)
  for (const [code, OpenAIError, AnthropicError] of cases) {
    const e =
      code === 529
        ? { status: 529, code: 'upstream_unavailable', message: 'Every upstream is overloaded' }
        : error(code)
    server.next(json(e.status, openaiErrorBody(e)), json(e.status, anthropicErrorBody(e)))
    const [fromOpenAI, fromAnthropic] = [
      await ask.openai(openai).catch((x) => x),
      await ask.anthropic(anthropic).catch((x) => x),
    ]
    t.ok(fromOpenAI instanceof OpenAIError, `${code}: OpenAI ${fromOpenAI.constructor.name}`)
    t.match(fromOpenAI, { status: e.status, code: e.code, type: openaiErrorType(e), message: new RegExp(e.message) })
    t.ok(fromAnthropic instanceof AnthropicError, `${code}: Anthropic ${fromAnthropic.constructor.name}`)
    t.match(fromAnthropic, {
      status: e.status,
      error: { type: 'error', error: { type: anthropicErrorType(e), message: e.message, code: e.code } },
    })
  }
})

t.test('error: a member that cannot be translated is a 400 naming it, in both protocols', async (t) => {
  const { server, openai, anthropic } = await sdks(t)
  const e = untranslatable(['logprobs', 'n'], 'Anthropic')
  t.equal(e.message, 'These members have no Anthropic equivalent: logprobs, n')
  server.next(json(400, openaiErrorBody(e)), json(400, anthropicErrorBody(untranslatable(['top_k'], 'OpenAI'))))
  t.match(await ask.openai(openai).catch((x) => x), {
    constructor: OpenAI.BadRequestError,
    param: 'logprobs',
    code: 'bad_request',
  })
  t.match(await ask.anthropic(anthropic).catch((x) => x), {
    constructor: Anthropic.BadRequestError,
    error: { error: { type: 'invalid_request_error', message: 'This member has no OpenAI equivalent: top_k' } },
  })
})

t.test('error: a failure mid-stream is the protocol error event, which the SDK raises', async (t) => {
  const { server, openai, anthropic } = await sdks(t)
  const openaiStream = new OpenAIStreamFromAnthropic({ includeUsage: true, created: 1 })
  const start = { message: { id: 'msg_1', model: 'm', usage: { input_tokens: 3, output_tokens: 0 } } }
  const events = [
    ...openaiStream.push('message_start', JSON.stringify(start)),
    ...openaiStream.push(
      'content_block_delta',
      JSON.stringify({ index: 0, delta: { type: 'text_delta', text: 'Hal' } })
    ),
    ...openaiStream.push(
      'error',
      JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })
    ),
  ]
  server.next(sseBody(sseText(events)))
  const fromOpenAI = await openai.chat.completions
    .stream({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
    .finalChatCompletion()
    .catch((x) => x)
  t.match(fromOpenAI, { constructor: OpenAI.APIError, message: /The upstream failed: Overloaded/ })

  const anthropicStream = new AnthropicStreamFromOpenAI()
  const chunk = { id: 'c', model: 'm', choices: [{ index: 0, delta: { content: 'Hal' } }] }
  server.next(
    sseBody(
      sseText([
        ...anthropicStream.push('', JSON.stringify(chunk)),
        ...anthropicStream.push('', JSON.stringify({ error: { message: 'The server had an error' } })),
      ])
    )
  )
  const fromAnthropic = await anthropic.messages
    .stream({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
    .finalMessage()
    .catch((x) => x)
  t.match(fromAnthropic, {
    constructor: Anthropic.APIError,
    error: { error: { type: 'api_error', code: 'upstream_error' } },
  })

  const ours = error('quota_exceeded', 'The monthly quota is spent')
  t.same(JSON.parse(openaiStreamError(ours).data), openaiErrorBody(ours))
  t.same(anthropicStreamError(ours), { event: 'error', data: JSON.stringify(anthropicErrorBody(ours)) })
})

t.test('security: an error body says what our error says, and no more', async (t) => {
  const e = new ApiError({
    code: 'bad_request',
    message: 'messages.0.content: Invalid type',
    details: {
      issues: [{ path: 'messages.0.content', message: 'x' }],
    },
  })
  t.same(openaiErrorBody(e), {
    error: {
      message: 'messages.0.content: Invalid type',
      type: 'invalid_request_error',
      param: 'messages.0.content',
      code: 'bad_request',
    },
  })
  t.same(anthropicErrorBody(e), {
    type: 'error',
    error: { type: 'invalid_request_error', message: 'messages.0.content: Invalid type', code: 'bad_request' },
  })
  const upstream = new AnthropicStreamFromOpenAI().push('', JSON.stringify({ error: { message: 'x'.repeat(5000) } }))
  t.ok(JSON.parse(upstream[0].data).error.message.length < 1100, "an upstream's message is cut short")
})
