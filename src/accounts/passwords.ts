import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'

// scrypt (N=2^14, r=8, p=1, 64 bytes) with a 16-byte salt, stored as scrypt$N$r$p$salt$hash (base64url).
const N = 16384
const R = 8
const P = 1
const LEN = 64

const derive = (password: string, salt: Buffer, n: number, r: number, p: number) =>
  new Promise<Buffer>((ok, fail) =>
    scrypt(password.normalize('NFC'), salt, LEN, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (e, key) =>
      e ? fail(e) : ok(key)
    )
  )

export const MIN_PASSWORD = 12

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, N, R, P)
  return ['scrypt', N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$')
}

// A hash to compare against when there is no user (or no password yet): the answer takes as long either way. Made
// by the first call (the dashboard makes it as it starts, so that the first answer takes no longer either); a CLI
// command, which never signs in, does not spend a scrypt (16 MiB) on it.
let dummy: Promise<string> | undefined
export const dummyHash = () => {
  dummy ??= hashPassword(randomBytes(16).toString('hex'))
  return dummy
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? (await dummyHash())).split('$')
  const [n, r, p] = parts.slice(1, 4).map(Number)
  const expected = Buffer.from(parts[5], 'base64url')
  const key = await derive(password, Buffer.from(parts[4], 'base64url'), n, r, p)
  return stored !== null && key.length === expected.length && timingSafeEqual(key, expected)
}

// What is wrong with a new password (and its repetition, when one was asked for), or null.
export function passwordProblem(password: string, confirm: string | null) {
  if (password.length < MIN_PASSWORD) return `The password needs at least ${MIN_PASSWORD} characters.`
  if (password.length > 1024) return 'The password is too long.'
  if (confirm !== null && confirm !== password) return 'The two passwords differ.'
  return null
}
