// After a failed `npm test` on Node.js 24: the test files that failed only by V8's known crash (nodejs/node#64500,
// electric-sql/pglite#1053: PGlite's WebAssembly instances made and freed in one process can trip the CHECK
// `jit_page_->allocations_.erase(addr) == 1`, and the process dies by SIGILL or SIGTRAP) with no assertion of theirs
// failed: after the last one, or between two (the WebAssembly is freed throughout a file, so the crash can come before
// its end). Prints those files, one line, for `.ci/run` to run once more, whole; exits 1, naming the others, if any
// file failed any other way (or none is known to have failed), so that no real failure is ever run again.
// Reads the run's TAP (tap's `--reporter=tap` output, argv[2]): each file is a subtest, its own lines indented, then its
// `ok` or `not ok` line at the top level with, when it failed, a YAML block saying how its process ended.
import { readFileSync } from 'node:fs'

const lines = readFileSync(process.argv[2], 'utf8').split('\n')
const crashed = []
const failed = []
let body = []
for (let i = 0; i < lines.length; i++) {
  const line = lines[i]
  if (line.startsWith('# Subtest: ')) body = []
  else if (line.startsWith('    ')) body.push(line)
  else if (line.startsWith('not ok ')) {
    const file = line.replace(/^not ok \d+ - /, '').replace(/ # .*$/, '')
    const yaml = []
    if (lines[i + 1] === '  ---') for (i += 2; i < lines.length && lines[i] !== '  ...'; i++) yaml.push(lines[i])
    const signal = /^ {2}signal: ([A-Z]\w+)$/m.exec(yaml.join('\n'))?.[1]
    // Every result it printed passed (the file may have died before its plan was met).
    const results = body.filter((l) => /^ {4}(not )?ok \d+/.test(l)).length
    const noneFailed = results > 0 && !body.some((l) => /^\s*not ok\b/.test(l))
    if (noneFailed && (signal === 'SIGILL' || signal === 'SIGTRAP')) crashed.push(file)
    else failed.push(`${file} (${signal ? `signal ${signal}` : 'an assertion or its exit code'})`)
  }
}

if (failed.length || !crashed.length) {
  console.error(`failed, and not by the V8 crash: ${failed.join(', ') || 'no test file (the run itself)'}`)
  process.exit(1)
}
console.log(crashed.join(' '))
