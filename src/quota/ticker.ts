// The quota's heartbeat: `tick` every `everyMs` while there is work for it (`busy`: an account served), and otherwise
// once, when the next thing is due (`dueIn`: the lease's renewal), so that an idle process does not wake 20 times a
// second. `wake` says there is work again.
export interface TickTimer {
  set(fn: () => void, ms: number): unknown
  clear(handle: unknown): void
}

export const realTimer: TickTimer = {
  set: (fn, ms) => setTimeout(fn, ms).unref(),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

export class Ticker {
  private handle: unknown = null
  private asleep = false

  constructor(
    private readonly tick: () => void,
    private readonly busy: () => boolean,
    private readonly dueIn: () => number,
    private readonly everyMs: number,
    private readonly timer: TickTimer
  ) {
    this.schedule()
  }

  wake() {
    if (!this.asleep || this.handle === null) return
    this.timer.clear(this.handle)
    this.schedule()
  }

  stop() {
    if (this.handle !== null) this.timer.clear(this.handle)
    this.handle = null
  }

  private schedule() {
    this.asleep = !this.busy()
    this.handle = this.timer.set(this.beat, this.asleep ? Math.max(this.everyMs, this.dueIn()) : this.everyMs)
  }

  private beat = () => {
    this.tick()
    this.schedule()
  }
}
