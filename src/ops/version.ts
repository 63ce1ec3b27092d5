import { readFileSync } from 'node:fs'

declare const STUDIO_VERSION: string | undefined

// The service's version: package.json's, put in the bundle by build.mjs, read from package.json when run from source.
export const version: string =
  typeof STUDIO_VERSION !== 'undefined'
    ? STUDIO_VERSION
    : JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version
