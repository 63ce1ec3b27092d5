// The benchmark's own dependencies (bench/package.json: the anchors it measures the service against) are not in the
// product's install: the first run installs them from bench/package-lock.json (`npm run bench:install` does the same).
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const bench = fileURLToPath(new URL('.', import.meta.url))

export function ensureBenchPackages(log) {
  if (existsSync(`${bench}node_modules/@portkey-ai/gateway/package.json`)) return
  log("the bench's own packages are missing: npm ci in bench/…")
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const r = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: bench, stdio: ['ignore', 'ignore', 'inherit'] })
  if (r.status !== 0) {
    console.error('npm ci in bench/ failed: run `npm run bench:install` and see its error')
    process.exit(2)
  }
}
