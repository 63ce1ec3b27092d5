import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'
import type { Teardown } from './teardown.js'

// Debian's Chromium (apt-get install -y chromium), never a downloaded browser, each context with a fresh profile.
const CHROMIUM = '/usr/bin/chromium'
export const hasChromium = () => existsSync(CHROMIUM)

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
