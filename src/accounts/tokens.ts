import { createHash, randomBytes } from 'node:crypto'

// The random tokens of sessions and sign-in links; only their SHA-256 is ever stored.
export const newToken = () => randomBytes(32).toString('base64url')
export const tokenDigest = (t: string) => createHash('sha256').update(t).digest()
