import { ApiError } from '../http/errors.js'
import type { Alias } from './call.js'

// The alias a caller of the OpenAI- or Anthropic-compatible routes named as its model, among those configured
// (`primary`, `fast`, STUDIO_MODEL_ALIASES), or 404 model_not_found.
export function aliasOf(model: string, aliases: Alias[]): Alias {
  if (aliases.includes(model)) return model
  const name = model.length > 100 ? `${model.slice(0, 100)}…` : model
  throw new ApiError({
    code: 'model_not_found',
    message: `There is no model "${name}"; use one of ${aliases.join(', ')}`,
  })
}
