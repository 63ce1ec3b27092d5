import { run } from '../../src/cli/cli.js'

// A browser stand-in for the dashboard's HTTP tests: keeps the session cookie, sends forms with the page's Origin,
// never follows redirects (so each 303 can be checked).
export interface Answer {
  status: number
  text: string
  headers: Headers
}

export class Browser {
  cookie = ''
  constructor(
    readonly base: string,
    readonly origin = base
  ) {}

  async get(path: string): Promise<Answer> {
    return this.send(path, { method: 'GET' })
  }

  // A field given a list is sent once per value, as checked checkboxes are.
  async post(path: string, form: Record<string, string | string[]>, origin: string | null = this.origin) {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
    if (origin) headers.origin = origin
    const fields = Object.entries(form).flatMap(([k, v]) =>
      (Array.isArray(v) ? v : [v]).map((one): [string, string] => [k, one])
    )
    return this.send(path, { method: 'POST', body: new URLSearchParams(fields).toString(), headers })
  }

  // A form of the page at `page`, sent with that page's CSRF token.
  async submit(page: string, path: string, form: Record<string, string | string[]> = {}) {
    return this.post(path, { csrf: csrfOf((await this.get(page)).text), ...form })
  }

  private async send(path: string, init: RequestInit): Promise<Answer> {
    const headers = new Headers(init.headers)
    if (this.cookie) headers.set('cookie', this.cookie)
    const res = await fetch(this.base + path, { ...init, headers, redirect: 'manual' })
    const set = res.headers.get('set-cookie')
    if (set) {
      const pair = set.split(';')[0]
      this.cookie = /Max-Age=0\b/.test(set) ? '' : pair
    }
    return { status: res.status, text: await res.text(), headers: res.headers }
  }
}

export const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? ''

export const PASSWORD = 'correct horse battery staple'

// `studio signin-link` through the CLI's own entry; returns the link (the last line of stdout).
export async function signinLink(dbEnv: Record<string, string>, env: Record<string, string>, args: string[]) {
  const out: string[] = []
  const code = await run(['signin-link', ...args], { ...dbEnv, ...env }, { out: (l) => out.push(l), err: () => {} })
  if (code !== 0) throw new Error(`signin-link exited ${code}`)
  return out.at(-1) ?? ''
}

// Opens a sign-in link and sets the password: the browser is signed in.
export async function signInWithLink(base: string, link: string, password = PASSWORD) {
  const b = new Browser(base)
  const path = new URL(link).pathname
  const set = await b.post(path, { password, confirm: password })
  if (set.status !== 303) throw new Error(`setting the password answered ${set.status}`)
  return b
}
