import { fileURLToPath } from 'node:url'

// A file of the repository, by its path from the root, wherever the test that asks stands.
export const fromRoot = (path: string) => new URL(`../../${path}`, import.meta.url)
export const rootPath = (path: string) => fileURLToPath(fromRoot(path))
