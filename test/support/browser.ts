import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import type { Test } from 'tap'
import { PASSWORD, signinLink } from './dashboard-client.js'
import { testDatabase } from './database.js'
import { fileNeeds } from './parts.js'
import { startTestServer } from './server.js'
import type { Teardown } from './teardown.js'

// Debian's Chromium (apt-get install -y chromium), never a downloaded browser, each context with a fresh profile.
const CHROMIUM = '/usr/bin/chromium'
const hasChromium = () => existsSync(CHROMIUM)

// For a file whose every test drives Chromium: whether it may run (else it skipped, or under CI failed, in one line).
export const needsChromium = (t: Test) =>
  fileNeeds(t, hasChromium(), 'no Chromium at /usr/bin/chromium: apt-get install -y chromium (.ci/run does)')

export async function openBrowser(t: Teardown, viewport = { width: 1280, height: 800 }): Promise<BrowserContext> {
  const dir = mkdtempSync(join(tmpdir(), 'studio-chromium-'))
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  })
  t.teardown(async () => {
    await context.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return context
}

// What went wrong on a page, recorded as it happens: any dialog (dismissed), console error, page error, or request to
// another origin than `origin`. A test expects the list to stay empty.
export function watchProblems(page: Page, origin: string): string[] {
  const problems: string[] = []
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`)
    void d.dismiss()
  })
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`))
  page.on('pageerror', (e) => problems.push(`error: ${e.message}`))
  page.on('request', (r) => new URL(r.url()).origin !== origin && problems.push(`request: ${r.url()}`))
  return problems
}

// Signs in with a new user's sign-in link as a person would: choose a password, land on the API keys.
async function signInWithPassword(page: Page, link: string, password: string) {
  await page.goto(link)
  await page.getByLabel('New password').fill(password)
  await page.getByLabel('Repeat it').fill(password)
  await page.getByRole('button', { name: 'Save and sign in' }).click()
  await page.waitForURL(/\/dashboard\/keys$/)
}

// The dashboard's browser tests' start: a real server over a database of the file's own (webhooks allowed to this
// machine's receivers), and Chromium signed in to its dashboard as `email` (a new owner) with PASSWORD, every
// problem of the page recorded in `problems`. `url` makes a path of the server an address.
export async function signedInBrowser(t: Test, email: string) {
  const dbEnv = await testDatabase(t)
  const server = await startTestServer(t, { STUDIO_WEBHOOKS_ALLOW_PRIVATE: 'true' }, { dbEnv })
  const context = await openBrowser(t)
  const page = await context.newPage()
  const problems = watchProblems(page, new URL(server.url).origin)
  const link = await signinLink(dbEnv, { STUDIO_PUBLIC_URL: server.url }, ['--email', email])
  await signInWithPassword(page, link, PASSWORD)
  return { dbEnv, server, page, problems, url: (path: string) => `${server.url}${path}` }
}
