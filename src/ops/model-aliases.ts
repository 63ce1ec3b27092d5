import * as v from 'valibot'
import type { UpstreamName } from './upstream-list.js'

// STUDIO_MODEL_ALIASES: the model aliases a caller of the OpenAI- and Anthropic-compatible routes may name beyond
// `primary` and `fast`, each with its model on each upstream, so that a fallback list of upstreams of different
// protocols still works: `coder=anthropic:claude-sonnet-4-5,openai:gpt-4.1;mini=openai:gpt-4.1-mini`. A model name
// may hold `:` (Ollama's `llama3.2:3b`): the upstream is what stands before the first one.

export type ModelAliases = Record<string, Partial<Record<'anthropic' | 'openai', string>>>

const ALIAS = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

function parse(text: string): ModelAliases | string {
  const aliases: ModelAliases = {}
  for (const entry of text.split(';').map((e) => e.trim())) {
    if (entry === '') continue
    const eq = entry.indexOf('=')
    const name = entry.slice(0, eq).trim()
    if (eq === -1 || !ALIAS.test(name)) return `"${entry}" is not alias=upstream:model,…`
    if (name === 'primary' || name === 'fast' || name in aliases) return `names ${name} twice or as a built-in alias`
    const models: ModelAliases[string] = {}
    for (const pair of entry.slice(eq + 1).split(',')) {
      const colon = pair.indexOf(':')
      const upstream = pair.slice(0, colon).trim()
      const model = pair.slice(colon + 1).trim()
      if ((upstream !== 'anthropic' && upstream !== 'openai') || model === '' || upstream in models)
        return `"${pair.trim()}" in ${name} is not anthropic:model or openai:model, once each`
      models[upstream] = model
    }
    aliases[name] = models
  }
  return aliases
}

export const modelAliases = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const parsed = parse(dataset.value)
    if (typeof parsed === 'object') return parsed
    addIssue({ message: `must be alias=upstream:model,… separated by ";": ${parsed}` })
    return NEVER
  })
)

// Every upstream a call may reach needs its model for each alias. Returns the variable and why, or null.
export function aliasWithoutModel(config: {
  STUDIO_UPSTREAM: readonly UpstreamName[]
  STUDIO_MODEL_ALIASES?: ModelAliases
}): [string, string] | null {
  // echo answers every alias with its one model.
  for (const [alias, models] of Object.entries(config.STUDIO_MODEL_ALIASES ?? {}))
    for (const upstream of config.STUDIO_UPSTREAM)
      if (upstream !== 'echo' && models[upstream] === undefined)
        return ['STUDIO_MODEL_ALIASES', `must give ${alias} a model for ${upstream}, which is in STUDIO_UPSTREAM`]
  return null
}

// Every alias a call may name: `primary`, `fast` and the operator's (each with a model for every upstream of the
// list: aliasWithoutModel refuses a start otherwise), in that order.
export const configuredAliases = (config: { STUDIO_MODEL_ALIASES?: ModelAliases }): string[] => [
  'primary',
  'fast',
  ...Object.keys(config.STUDIO_MODEL_ALIASES ?? {}),
]
