// tap's `after` step: hold the run's responses against the OpenAPI document, then remove the run's bundle.
import t from 'tap'
import { removeRunBundle } from './bundle.js'
import './responses-check.js'

t.teardown(removeRunBundle)
