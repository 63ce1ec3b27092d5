// HTML built from templates: every interpolated value is escaped unless it is already Html (a template's result or
// an explicit raw() call). Arrays are joined; null, undefined and false render as nothing.

export class Html {
  constructor(readonly text: string) {}
  toString() {
    return this.text
  }
}

export type Value = Html | string | number | null | undefined | false | readonly Value[]

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c])

function render(v: Value): string {
  if (v instanceof Html) return v.text
  if (Array.isArray(v)) return v.map(render).join('')
  if (v === null || v === undefined || v === false) return ''
  return escapeHtml(String(v))
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]
  return new Html(out)
}

// Markup that is trusted as it is: only for text this code wrote (never for anything a user or a lead sent).
export const raw = (trusted: string) => new Html(trusted)
