// npm run gen:client — regenerates test/generated/studio-api.d.ts from the OpenAPI document the server serves.
import { writeFileSync } from 'node:fs'
import openapiTS, { astToString } from 'openapi-typescript'
import { buildOpenApi } from '../src/api/openapi.js'
import { parseConfig } from '../src/ops/config.js'
import { adapterFor, apiRoutes } from '../src/service.js'

const doc = buildOpenApi(
  apiRoutes(
    null as never,
    { onAccountChange() {} } as never,
    { adapter: adapterFor(parseConfig({})), quota: { onChange() {} } } as never
  )
)
writeFileSync(
  new URL('./generated/studio-api.d.ts', import.meta.url),
  astToString(await openapiTS(doc as never, { defaultNonNullable: false }))
)
