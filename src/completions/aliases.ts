import { ApiError } from '../http/errors.js'
import type { Alias } from './call.js'

const ALIASES: readonly string[] = ['primary', 'fast']

// The alias a caller of the OpenAI- or Anthropic-compatible routes named as its model, or 404 model_not_found.
export function aliasOf(model: string): Alias {
  if (ALIASES.includes(model)) return model as Alias
  const name = model.length > 100 ? `${model.slice(0, 100)}…` : model
  throw new ApiError({
    code: 'model_not_found',
    message: `There is no model "${name}"; use one of ${ALIASES.join(', ')}`,
  })
}
