import * as v from 'valibot'

const UPSTREAMS = ['anthropic', 'openai', 'echo'] as const
export type UpstreamName = (typeof UPSTREAMS)[number]
// An ordered list of upstream names, tried in that order: `anthropic,openai`.
export const upstreamList = v.pipe(
  v.string(),
  v.transform((s) => s.split(',').map((name) => name.trim())),
  v.check(
    (names) => names.every((n) => (UPSTREAMS as readonly string[]).includes(n)),
    'must be anthropic, openai or echo, or several in order, comma-separated (e.g. anthropic,openai)'
  ),
  v.check((names) => new Set(names).size === names.length, 'must not name an upstream twice'),
  v.transform((names) => names as readonly UpstreamName[])
)

// The setting an upstream needs to answer (echo answers in-process: it needs nothing).
const NEEDS = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_BASE_URL' } as const

type UpstreamSettings = {
  STUDIO_UPSTREAM: readonly UpstreamName[]
  ANTHROPIC_API_KEY?: string
  OPENAI_BASE_URL?: string
}

// What the start says of AI: the upstreams in fallback order, or that it is off and which setting turns it on (a
// single upstream without its setting starts, and its completions answer 503 ai_not_configured).
export function aiSummary(config: UpstreamSettings): string {
  const [only] = config.STUDIO_UPSTREAM
  if (config.STUDIO_UPSTREAM.length === 1 && only !== 'echo' && config[NEEDS[only]] === undefined)
    return `AI off (set ${NEEDS[only]} for ${only}, or STUDIO_UPSTREAM=echo to try it)`
  return config.STUDIO_UPSTREAM.join(',')
}

// In a fallback list, every upstream must be usable: one left unconfigured would fail its share of calls. Returns
// the variable missing and why, or null.
export function missingUpstream(config: UpstreamSettings): [string, string] | null {
  if (config.STUDIO_UPSTREAM.length < 2) return null
  for (const name of config.STUDIO_UPSTREAM) {
    if (name === 'echo') continue
    const variable = NEEDS[name]
    if (config[variable] === undefined)
      return [variable, `must be set: ${name} is in STUDIO_UPSTREAM (${config.STUDIO_UPSTREAM.join(',')})`]
  }
  return null
}
