import type { Principal } from '../accounts/auth.js'
import { ApiError } from '../http/errors.js'
import type { Alias } from './call.js'

// The alias a caller of the OpenAI- or Anthropic-compatible routes named as its model, among those configured
// (`primary`, `fast`, STUDIO_MODEL_ALIASES), or 404 model_not_found; then one its key may call.
export function aliasOf(model: string, aliases: Alias[], principal: Principal): Alias {
  if (!aliases.includes(model)) {
    const name = model.length > 100 ? `${model.slice(0, 100)}…` : model
    throw new ApiError({
      code: 'model_not_found',
      message: `There is no model "${name}"; use one of ${aliases.join(', ')}`,
    })
  }
  return allowedAlias(model, principal)
}

// The alias, when the key may call it (a key limited to some aliases: accounts/key-limits.ts), else 403
// model_not_allowed naming the ones it may.
export function allowedAlias(alias: Alias, { models }: Principal): Alias {
  if (models === null || models.includes(alias)) return alias
  throw new ApiError({
    code: 'model_not_allowed',
    message: `This key may not call the model "${alias}"; it may call ${models.join(', ')}`,
  })
}

// The configured aliases the key may call, in their order.
export const allowedAliases = (aliases: Alias[], { models }: Principal): Alias[] =>
  models === null ? aliases : aliases.filter((a) => models.includes(a))
