import { readFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'

// Ports the tests can rely on, all outside the range the kernel gives port 0 from (Linux: ip_local_port_range), where
// every other server of the run listens: one where nothing listens, and a free one for a server a test starts on a
// port of its own choosing (PostgreSQL, Redis, nginx) and may stop and start again on it. None can be given to another
// server meanwhile, as a port freed after a probe could. Where that range is not known, the kernel's own choice.

const LOW = 10_000

function ephemeralFloor(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 0
  } catch {
    return 0
  }
}

const floor = ephemeralFloor()

// The port once a listener on 127.0.0.1 could take it and has let it go; null when it could not.
const bindable = (port: number) =>
  new Promise<number | null>((ok) => {
    const s = createServer()
    s.once('error', () => ok(null))
    s.listen(port, '127.0.0.1', () => {
      const taken = (s.address() as { port: number }).port
      s.close(() => ok(taken))
    })
  })

export async function freePort(): Promise<number> {
  for (let i = 0; i < 50 && floor > LOW + 1000; i++) {
    const port = await bindable(LOW + Math.floor(Math.random() * (floor - LOW)))
    if (port !== null) return port
  }
  const port = await bindable(0)
  if (port === null) throw new Error('no free port on 127.0.0.1')
  return port
}

// Port 1, where nothing listens (checked once): a test meant to be refused is refused.
export async function refusedPort(): Promise<number> {
  await new Promise<void>((ok, fail) => {
    const socket = connect(1, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      fail(new Error('something listens on 127.0.0.1:1; the tests need it refused'))
    })
    socket.once('error', () => ok())
  })
  return 1
}
