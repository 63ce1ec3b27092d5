import type { CreatedKey } from '../accounts/key-lifecycle.js'
import type { Io } from './command.js'

// What the commands print: a new key (alone on the last line), and tab-separated tables with a header line.

export function printKey(io: Io, k: CreatedKey, email: string | null | undefined) {
  io.out(`account ${k.accountId} (plan ${k.plan})${k.userId ? `, user ${k.userId} <${email}>` : ', no user'}`)
  io.out(
    `key ${k.prefix} created${k.expiresAt ? `, expires ${k.expiresAt.toISOString()}` : ''}; ` +
      'it is shown once, store it now:'
  )
  io.out(k.key)
}

export function printTable(io: Io, header: string[], rows: (string | number)[][]) {
  io.out(header.join('\t'))
  for (const row of rows) io.out(row.join('\t'))
}
