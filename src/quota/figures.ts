import { ApiError } from '../http/errors.js'

export interface QuotaStatus {
  limit: number | null
  used: number
  remaining: number | null
  resets_at: string
}

// The month's figures as GET /me shows them.
export const quotaStatus = (limit: number | null, used: number, resetsAt: Date): QuotaStatus => ({
  limit,
  used,
  remaining: limit === null ? null : Math.max(0, limit - used),
  resets_at: resetsAt.toISOString(),
})

export const quotaExceeded = (limit: number, used: number, resetsAt: Date, now: number) =>
  new ApiError(
    'quota_exceeded',
    `The monthly AI quota of this account is used up; it resets at ${resetsAt.toISOString()}`,
    { limit, used, resets_at: resetsAt.toISOString() },
    { 'retry-after': String(Math.max(1, Math.ceil((resetsAt.getTime() - now) / 1000))) }
  )
