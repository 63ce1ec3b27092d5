import { ApiError } from '../http/errors.js'
import type { Usage } from './call.js'

// How a call is recorded (one row of the completions table, complete.ts makes it): its outcome, attempts, the
// upstream's request id and usage, and whether the upstream sent no usage at all.
export type Record = (
  outcome: string,
  attempts: number,
  requestId: string | null,
  usage?: Usage,
  usageMissing?: boolean
) => void

// The completions table's outcome for a call whose unit was refused while the call was under way.
export const refusedOutcome = (e: unknown) =>
  e instanceof ApiError && (e.code === 'quota_exceeded' || e.code === 'key_quota_exceeded')
    ? e.code
    : 'quota_unavailable'
