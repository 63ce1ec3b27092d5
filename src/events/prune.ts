// The delivery log (events, deliveries, attempts, mails) is kept 30 days, deleted in batches (storage/batches.ts).
export const KEEP_MS = 30 * 86_400_000
