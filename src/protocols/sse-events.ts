// One server-sent event to write to the caller: OpenAI's chunks have data alone, Anthropic's events their name too.
export interface SseEvent {
  event?: string
  data: string
}

export const sseText = (events: SseEvent[]) =>
  events.map((e) => `${e.event === undefined ? '' : `event: ${e.event}\n`}data: ${e.data}\n\n`).join('')
