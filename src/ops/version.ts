import { readFileSync } from 'node:fs'

declare const STUDIO_VERSION: string | undefined

// Whether this is the bundle: build.mjs defines STUDIO_VERSION in it; run from source it is not defined.
const bundled = typeof STUDIO_VERSION !== 'undefined'

// The service's version: package.json's, put in the bundle by build.mjs, read from package.json when run from source.
export const version: string = bundled
  ? (STUDIO_VERSION as string)
  : JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version
