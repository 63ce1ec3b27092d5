import * as crypto from 'node:crypto'
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

// studio_<prefix>_<secret>: prefix is 12 base62 characters (looked up in clear), secret is 22 random base62
// characters (131 bits) followed by 6 base62 characters of CRC32 over everything before them, so a mistyped or
// made-up key is refused without a database read. Only SHA-256(secret) is stored.

export const LABEL = 'studio'
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const PREFIX_LEN = 12
const RANDOM_LEN = 22
const CHECK_LEN = 6
const SHAPE = new RegExp(`^${LABEL}_([0-9A-Za-z]{${PREFIX_LEN}})_([0-9A-Za-z]{${RANDOM_LEN + CHECK_LEN}})$`)

function randomBase62(n: number): string {
  let out = ''
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 248 && out.length < n) out += ALPHABET[b % 62]
    }
  }
  return out
}

function base62(n: number, width: number): string {
  let out = ''
  for (let i = 0; i < width; i++) {
    out = ALPHABET[n % 62] + out
    n = Math.floor(n / 62)
  }
  return out
}

// CRC-32 (IEEE 802.3, as zlib's) of an ASCII string: written here because importing node:zlib for it loaded zlib at
// every start.
const CRC_TABLE = Int32Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c
})
export function crc32(ascii: string): number {
  let c = -1
  for (let i = 0; i < ascii.length; i++) c = CRC_TABLE[(c ^ ascii.charCodeAt(i)) & 0xff] ^ (c >>> 8)
  return (c ^ -1) >>> 0
}

export const checksumOf = (body: string) => base62(crc32(body), CHECK_LEN)

export interface NewKey {
  key: string
  prefix: string
  secretHash: Buffer
}

export function generateKey(): NewKey {
  const prefix = randomBase62(PREFIX_LEN)
  const body = `${LABEL}_${prefix}_${randomBase62(RANDOM_LEN)}`
  const key = body + checksumOf(body)
  return { key, prefix, secretHash: hashSecret(key.slice(LABEL.length + PREFIX_LEN + 2)) }
}

// Where the prefix sits in a well-formed key (whether `key` is one is parseKey's to say).
export const prefixOf = (key: string) => key.slice(LABEL.length + 1, LABEL.length + 1 + PREFIX_LEN)

export interface ParsedKey {
  prefix: string
  secret: string
}

export function parseKey(key: string): ParsedKey | null {
  const m = SHAPE.exec(key)
  if (!m) return null
  const cut = key.length - CHECK_LEN
  if (checksumOf(key.slice(0, cut)) !== key.slice(cut)) return null
  return { prefix: m[1], secret: m[2] }
}

// The one-shot crypto.hash where Node has it (20.12+, 21.7+): no Hash object per call, as the hot path verifies a key
// per request.
const oneShot = (crypto as { hash?: typeof crypto.hash }).hash
export const hashSecret: (secret: string) => Buffer =
  typeof oneShot === 'function'
    ? (secret) => oneShot('sha256', secret, 'buffer')
    : (secret) => createHash('sha256').update(secret).digest()

export const secretMatches = (secret: string, stored: Buffer) => timingSafeEqual(hashSecret(secret), stored)

export const isPrefix = (s: string) => s.length === PREFIX_LEN && /^[0-9A-Za-z]+$/.test(s)
