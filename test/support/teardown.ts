// What the toolkit needs of a tap test (or of the scripts that stand in for one): somewhere to register cleanups.
export interface Teardown {
  teardown(fn: () => unknown): void
}
