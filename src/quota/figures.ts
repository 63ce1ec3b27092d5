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

// A monthly count used up until `resetsAt`: the account's quota, or a key's own cap (accounts/key-limits.ts; the
// account's quota may have room left). Retry-After runs to the reset.
const usedUp =
  (code: 'quota_exceeded' | 'key_quota_exceeded', what: string) =>
  (limit: number, used: number, resetsAt: Date, now: number) =>
    new ApiError({
      code,
      message: `The monthly ${what} is used up; it resets at ${resetsAt.toISOString()}`,
      details: { limit, used, resets_at: resetsAt.toISOString() },
      headers: { 'retry-after': String(Math.max(1, Math.ceil((resetsAt.getTime() - now) / 1000))) },
    })

export const quotaExceeded = usedUp('quota_exceeded', 'AI quota of this account')
export const keyQuotaExceeded = usedUp('key_quota_exceeded', 'completions cap of this key')
