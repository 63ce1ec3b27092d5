// tap's `before` step: forget the responses of an earlier run (responses.ts) and build the run's bundle (bundle.ts).
import { buildRunBundle } from './bundle.js'
import { clearResponses } from './responses.js'

clearResponses()
await buildRunBundle()
