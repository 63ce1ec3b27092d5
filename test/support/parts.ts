import type { Test } from 'tap'

// The parts of the machine some tests need besides Node.js and PostgreSQL: Chromium, Redis, Python. Where one is
// missing, the tests that need it skip with one line naming it and how to get it; under CI (`CI` set, as .ci/run sets
// it) a missing part fails the file instead, so that CI never skips.

// `false` when the part is there; else the reason the tests that need it are skipped.
export function lacking(t: Test, present: boolean, missing: string): false | string {
  if (present) return false
  if (process.env.CI) t.fail(`${missing}: CI never skips`)
  return missing
}

// For a file whose every test needs the part: whether it may run. When not, it has skipped in one line (or failed,
// under CI).
export function fileNeeds(t: Test, present: boolean, missing: string): boolean {
  const skip = lacking(t, present, missing)
  if (skip && !process.env.CI) t.plan(0, skip)
  return !skip
}
