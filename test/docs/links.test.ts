import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import t from 'tap'

// Every relative link of the documents a reader opens points at a file of the repository that exists and, with a
// `#anchor`, at a heading of it, by GitHub's slugs; none climbs out of the repository (a clone has nothing there).
const root = resolve(new URL('../..', import.meta.url).pathname)
const inFolder = (folder: string) =>
  existsSync(join(root, folder))
    ? readdirSync(join(root, folder))
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(folder, f))
    : []
const clients = readdirSync(join(root, 'clients')).map((c) => join('clients', c, 'README.md'))
const documents = [
  'README.md',
  'CONTRIBUTING.md',
  'ARCHITECTURE.md',
  'BENCHMARKS.md',
  ...clients,
  ...inFolder('docs'),
].filter((f) => existsSync(join(root, f)))

// The text outside fenced code blocks, inline code spans blanked (a link or heading written as code is neither).
function prose(markdown: string): string[] {
  let fenced = false
  return markdown.split('\n').flatMap((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced
      return []
    }
    return fenced ? [] : [line]
  })
}

// GitHub's heading anchors: the text as rendered (code and link markup dropped), lowercased, every character that is
// not a letter, digit, space, `-` or `_` dropped, spaces to `-`; a repeated one gets `-1`, `-2`, ….
function slug(heading: string): string {
  return heading
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replaceAll(' ', '-')
}

const anchorsCache = new Map<string, Set<string>>()
function anchorsOf(file: string): Set<string> {
  const known = anchorsCache.get(file)
  if (known) return known
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const line of prose(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const base = slug(heading)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  anchorsCache.set(file, anchors)
  return anchors
}

function linksOf(markdown: string): string[] {
  const text = prose(markdown)
    .join('\n')
    .replace(/`[^`\n]*`/g, '')
  return [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1])
}

t.test('the documents found are the ones a reader opens', async (t) => {
  for (const f of ['README.md', 'CONTRIBUTING.md', 'ARCHITECTURE.md', 'BENCHMARKS.md']) t.ok(documents.includes(f), f)
  t.ok(documents.some((f) => f.startsWith('docs/')))
})

for (const document of documents) {
  t.test(`${document}: every relative link points at a file and heading that exist`, async (t) => {
    const file = join(root, document)
    const links = linksOf(readFileSync(file, 'utf8')).filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l))
    for (const link of links) {
      const [path, anchor] = link.split('#', 2) as [string, string | undefined]
      const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path))
      const inside = relative(root, target)
      if (inside.startsWith('..') || resolve(root, inside) !== target) {
        t.fail(`${link}: leaves the repository`)
        continue
      }
      if (!existsSync(target)) {
        t.fail(`${link}: no file ${inside}`)
        continue
      }
      if (anchor === undefined) continue
      if (statSync(target).isDirectory() || !target.endsWith('.md')) t.fail(`${link}: an anchor into ${inside}`)
      else if (!anchorsOf(target).has(anchor)) t.fail(`${link}: no heading #${anchor} in ${inside}`)
    }
    t.pass(`${links.length} relative links`)
  })
}

t.test('the slugs follow GitHub', async (t) => {
  t.equal(slug('What is refused, and why'), 'what-is-refused-and-why')
  t.equal(slug('`STUDIO_UPSTREAM` and its fallback'), 'studio_upstream-and-its-fallback')
  t.equal(slug("Bird's-eye view"), 'birds-eye-view')
  t.equal(slug('OpenAI and Anthropic SDKs'), 'openai-and-anthropic-sdks')
})
