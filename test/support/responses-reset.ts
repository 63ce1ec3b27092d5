// tap's `before` step: forget the responses of an earlier run (see responses.ts).
import { clearResponses } from './responses.js'

clearResponses()
