// Anthropic's stop_reason and OpenAI's finish_reason, each way.

const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
}

// OpenAI's finish_reason → Anthropic's stop_reason (also the native route's, which keeps an unknown one as it is).
export const STOP_REASONS: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
}

export const finishReasonOf = (stopReason: unknown) =>
  typeof stopReason === 'string' ? (FINISH_REASONS[stopReason] ?? 'stop') : 'stop'

export const stopReasonOf = (finishReason: unknown) =>
  typeof finishReason === 'string' ? (STOP_REASONS[finishReason] ?? 'end_turn') : 'end_turn'
