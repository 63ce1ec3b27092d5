type Listener = () => void

// The one abort of an upstream call. The caller aborts it with `cancel` (its client went away, its quota was
// refused), the deadline with `expire`; each is noted apart, so the call's outcome says which it was (the caller's,
// if both). Its listeners are the attempt's (exchange.ts) and the retry sleep's; not an AbortController: that would
// make an AbortSignal, an EventTarget, per call.
export class CallAbort {
  aborted = false
  byCaller = false
  byDeadline = false
  private listeners: Listener[] | null = null

  cancel() {
    this.byCaller = true
    this.fire()
  }

  expire() {
    this.byDeadline = true
    this.fire()
  }

  // Listeners are called once, on the first abort.
  on(_event: 'abort', fn: Listener) {
    ;(this.listeners ??= []).push(fn)
    return this
  }

  removeListener(_event: 'abort', fn: Listener) {
    const i = this.listeners?.indexOf(fn) ?? -1
    if (i !== -1) this.listeners!.splice(i, 1)
    return this
  }

  // Resolves after `ms`; rejects as soon as the call is aborted (at once if it is already).
  sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.aborted) return reject(new Error('aborted'))
      const onAbort = () => {
        clearTimeout(timer)
        reject(new Error('aborted'))
      }
      const timer = setTimeout(() => {
        this.removeListener('abort', onAbort)
        resolve()
      }, ms)
      this.on('abort', onAbort)
    })
  }

  private fire() {
    if (this.aborted) return
    this.aborted = true
    const listeners = this.listeners
    this.listeners = null
    if (listeners) for (const fn of listeners) fn()
  }
}
