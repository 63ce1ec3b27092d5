import { randomBytes, randomFillSync } from 'node:crypto'

// Random base64url strings for the ids and tokens of the write path (an event's id, a lead batch's token), cut from
// a pool of the CSPRNG's bytes filled 4 KiB at a time: one call into it for hundreds of ids instead of one each, as
// node:crypto's randomUUID does. Each byte is used once.
const pool = Buffer.alloc(4096)
let used = pool.length

export function randomBase64url(bytes: number): string {
  if (bytes > pool.length) return randomBytes(bytes).toString('base64url')
  if (used + bytes > pool.length) {
    randomFillSync(pool)
    used = 0
  }
  const s = pool.toString('base64url', used, used + bytes)
  used += bytes
  return s
}
