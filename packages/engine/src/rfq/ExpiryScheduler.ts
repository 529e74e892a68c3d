import { Clock, Deferred, Duration, Effect, type Fiber, Option } from "effect"

/**
 * One fiber for every RFQ's expiry: a min-heap of (expiresAt, rfqId) and a sleep until the earliest.
 * A new earlier entry wakes the fiber. Entries are never removed: when one fires, the engine checks
 * the RFQ's real state, so a cancelled or traded RFQ simply ignores it. Time comes from Effect's
 * Clock, so tests drive it with TestClock.
 *
 * Ours, not a fiber per RFQ with `Effect.sleep`: at 100,000 open RFQs one heap and one fiber cost
 * a few MB, a fiber each would cost far more (see bench, memory per open RFQ).
 */
export interface ExpiryScheduler {
  readonly schedule: (rfqId: number, expiresAt: number) => Effect.Effect<void>
  readonly size: () => number
}

class MinHeap {
  private readonly at: Array<number> = []
  private readonly ids: Array<number> = []
  get size() {
    return this.at.length
  }
  peek(): number | undefined {
    return this.at[0]
  }
  push(at: number, id: number) {
    this.at.push(at)
    this.ids.push(id)
    let i = this.at.length - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (this.at[p]! <= this.at[i]!) break
      this.swap(i, p)
      i = p
    }
  }
  pop(): [number, number] | undefined {
    if (this.at.length === 0) return undefined
    const top: [number, number] = [this.at[0]!, this.ids[0]!]
    const lastAt = this.at.pop()!
    const lastId = this.ids.pop()!
    if (this.at.length > 0) {
      this.at[0] = lastAt
      this.ids[0] = lastId
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < this.at.length && this.at[l]! < this.at[m]!) m = l
        if (r < this.at.length && this.at[r]! < this.at[m]!) m = r
        if (m === i) break
        this.swap(i, m)
        i = m
      }
    }
    return top
  }
  private swap(a: number, b: number) {
    const t = this.at[a]!
    this.at[a] = this.at[b]!
    this.at[b] = t
    const u = this.ids[a]!
    this.ids[a] = this.ids[b]!
    this.ids[b] = u
  }
}

/**
 * Starts the scheduler in the current scope. `onDue` runs for each due RFQ, in expiry order; it
 * must not fail (the engine logs and continues).
 */
export const makeExpiryScheduler = (onDue: (rfqId: number, now: number) => Effect.Effect<void>) =>
  Effect.gen(function* () {
    const heap = new MinHeap()
    let wake = yield* Deferred.make<void>()
    const loop: Effect.Effect<never> = Effect.gen(function* () {
      for (;;) {
        const now = yield* Clock.currentTimeMillis
        const next = heap.peek()
        if (next !== undefined && next <= now) {
          const [, id] = heap.pop()!
          yield* onDue(id, now)
          continue
        }
        const signal = wake
        if (next === undefined) {
          yield* Deferred.await(signal)
        } else {
          yield* Effect.raceFirst(Effect.sleep(Duration.millis(next - now)), Deferred.await(signal))
        }
        if (Option.isSome(yield* Deferred.poll(signal))) wake = yield* Deferred.make<void>()
      }
    })
    const fiber: Fiber.RuntimeFiber<never> = yield* Effect.forkScoped(loop)
    void fiber
    const scheduler: ExpiryScheduler = {
      schedule: (rfqId, expiresAt) =>
        Effect.suspend(() => {
          const earliest = heap.peek()
          heap.push(expiresAt, rfqId)
          return earliest === undefined || expiresAt < earliest
            ? Deferred.succeed(wake, undefined)
            : Effect.void
        }),
      size: () => heap.size
    }
    return scheduler
  })
