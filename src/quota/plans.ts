import type { Config } from '../ops/config.js'

export type QuotaLimits = Pick<
  Config,
  'STUDIO_QUOTA_FREE' | 'STUDIO_QUOTA_STARTER' | 'STUDIO_QUOTA_PRO' | 'STUDIO_QUOTA_ENTERPRISE'
>

// The plan → monthly limit table (null: unlimited), the one place it is written: the usage report reads it through
// limitFor, and the database receives it whole with every change (sql/010) to look up the plan under the row lock.
export const limitsByPlan = (config: QuotaLimits): Record<string, number | null> => ({
  FREE: config.STUDIO_QUOTA_FREE,
  STARTER: config.STUDIO_QUOTA_STARTER,
  PRO: config.STUDIO_QUOTA_PRO,
  ENTERPRISE: config.STUDIO_QUOTA_ENTERPRISE,
})

// Plans are checked by the database (accounts.plan); anything else is treated as the unbounded plan, ENTERPRISE.
export function limitFor(config: QuotaLimits, plan: string): number | null {
  const limits = limitsByPlan(config)
  return plan in limits ? limits[plan] : limits.ENTERPRISE
}
