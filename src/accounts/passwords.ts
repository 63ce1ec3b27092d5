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

// A hash to compare against when there is no user (or no password yet), so that the answer takes as long either way:
// the scrypt of a random password that was thrown away, with this file's parameters. A constant, so that no start
// spends a scrypt (16 MiB, tens of milliseconds of a core) on making one; it never matches (`stored` is null).
const DUMMY_HASH = [
  'scrypt',
  N,
  R,
  P,
  'QNSJ5mERU-isN6A8s1wTUQ',
  'k6HeABeL5MQYmfegVX4-HTIlJY27Ejmezsko72JZ5qYhXSCbdSod3l43D1gKX7EeoAzyoqSXyjLvo918SiWJdQ',
].join('$')

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? DUMMY_HASH).split('$')
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
