import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import ts from 'typescript'

// The shape ARCHITECTURE.md asks of src/: no file over 250 lines, no function over 60 lines of its own (the lines of
// the functions nested in it are theirs, not its) nor over 120 counting them, no line over 120 characters.
const MAX_FILE_LINES = 250
const MAX_FUNCTION_LINES = 60
const MAX_WHOLE_FUNCTION_LINES = 120
const MAX_LINE = 120

const root = new URL('../../src/', import.meta.url).pathname
const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).sort()

function ownLines(source: ts.SourceFile): { name: string; lines: number; whole: number }[] {
  const found: { name: string; lines: number; whole: number }[] = []
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line
  const span = (n: ts.Node) => lineOf(n.getEnd()) - lineOf(n.getStart(source)) + 1
  const nameOf = (n: ts.Node): string => {
    const named = (n as { name?: ts.Node }).name ?? (ts.isVariableDeclaration(n.parent) ? n.parent.name : undefined)
    return `${named ? named.getText(source) : '(anonymous)'}:${lineOf(n.getStart(source)) + 1}`
  }
  // Returns the lines of the outermost functions within `node`, recording each function's own count on the way.
  const visit = (node: ts.Node): number => {
    if (ts.isFunctionLike(node) && (node as { body?: ts.Node }).body) {
      const nested = (node as unknown as { body: ts.Node }).body
      let inner = 0
      ts.forEachChild(nested, (c) => void (inner += visit(c)))
      found.push({ name: nameOf(node), lines: span(node) - inner, whole: span(node) })
      return span(node)
    }
    let inner = 0
    ts.forEachChild(node, (c) => void (inner += visit(c)))
    return inner
  }
  visit(source)
  return found
}

t.test(`no function in src/ has more than ${MAX_FUNCTION_LINES} lines of its own`, async (t) => {
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8')
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
    for (const f of ownLines(source)) if (f.lines > MAX_FUNCTION_LINES) t.fail(`${file} ${f.name}: ${f.lines} lines`)
  }
  t.pass('checked')
})

t.test(`no function in src/ has more than ${MAX_WHOLE_FUNCTION_LINES} lines with its nested ones`, async (t) => {
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true)
    for (const f of ownLines(source))
      if (f.whole > MAX_WHOLE_FUNCTION_LINES) t.fail(`${file} ${f.name}: ${f.whole} lines`)
  }
  t.pass('checked')
})

t.test(`no file in src/ has more than ${MAX_FILE_LINES} lines`, async (t) => {
  for (const file of files) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n').length - 1
    if (lines > MAX_FILE_LINES) t.fail(`${file}: ${lines} lines`)
  }
  t.pass('checked')
})

t.test(`no line in src/ is longer than ${MAX_LINE} characters`, async (t) => {
  for (const file of files) {
    readFileSync(join(root, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (line.length > MAX_LINE) t.fail(`${file}:${i + 1}: ${line.length} characters`)
      })
  }
  t.pass('checked')
})
