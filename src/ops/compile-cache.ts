import module from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bundled } from './version.js'

// Node.js 22.8 and later can keep V8's compiled code of the modules a process loads on disk, and the next start
// compiles from it (module.enableCompileCache); Node.js 20 has no such call, and there this does nothing. What is
// cached is code the next start runs, so it is kept where only those who could change the bundle write: next to it
// (dist/.compile-cache, removed with dist/ at each build), or the directory the operator names: NODE_COMPILE_CACHE
// (Node.js reads it itself), or systemd's CACHE_DIRECTORY. Never Node.js's default, the shared temporary directory.
// Not from source (the tests run the CLI so). A directory this user cannot write costs nothing: Node.js skips it.
export function compileCacheDir(env: Record<string, string | undefined>, bundle: string | null): string | null {
  if (env.CACHE_DIRECTORY) return env.CACHE_DIRECTORY.split(':')[0]
  return bundle && join(dirname(bundle), '.compile-cache')
}

const node = module as { enableCompileCache?: (directory: string) => unknown; flushCompileCache?: () => void }

export function enableCompileCache(env: Record<string, string | undefined>) {
  const enable = node.enableCompileCache
  // With NODE_COMPILE_CACHE set, Node.js has turned the cache on before this runs.
  if (!enable || env.NODE_COMPILE_CACHE) return
  const bundle = bundled ? fileURLToPath(import.meta.url) : null
  const dir = compileCacheDir(env, bundle)
  if (dir) enable(dir)
}

// Node.js writes the cache when the process exits; a server that listens writes it then too (Node.js 22.10+), so
// that one killed rather than stopped (out of memory, SIGKILL) has left it for the next start.
export const flushCompileCache = () => node.flushCompileCache?.()
