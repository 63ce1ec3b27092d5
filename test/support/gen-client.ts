// npm run gen:client — regenerates the TypeScript client's types (clients/typescript/src/openapi.ts) and the Python
// client's types and event classes (clients/python/src/studio_api/_types.py, _events.py) from the OpenAPI document the
// server serves.
import { writeFileSync } from 'node:fs'
import { buildOpenApi } from '../../src/api/openapi.js'
import { EVENT_ENVELOPES } from '../../src/outbox/catalogue.js'
import { parseConfig } from '../../src/ops/config.js'
import { adaptersFor, createUpstreams } from '../../src/completions/fallback.js'
import { apiRoutes } from '../../src/routes.js'
import { captchaVerifier } from '../../src/leads/captcha.js'
import { CLIENT_TYPES, clientTypes } from './client-types.js'
import { pythonClientFiles } from './python-client-types.js'

const doc = buildOpenApi(
  apiRoutes({
    db: {} as never,
    keys: { onAccountChange() {} } as never,
    completions: { upstreams: createUpstreams(adaptersFor(parseConfig({}))), quota: { onChange() {} } } as never,
    verifyCaptcha: captchaVerifier({}),
  }),
  EVENT_ENVELOPES
)
writeFileSync(CLIENT_TYPES, await clientTypes(doc))
for (const [file, text] of pythonClientFiles(doc)) writeFileSync(file, text)
