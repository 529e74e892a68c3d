import { Effect, type Fiber, FiberId } from "effect"

/**
 * Counts requests that have started and not yet settled (response written or connection gone,
 * and the handler's fiber ended), so that shutdown can wait for them before closing the database.
 */
export class InFlight {
  private count = 0
  private readonly fibers = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
  private idleWaiters: Array<() => void> = []

  get size(): number {
    return this.count
  }

  begin(): void {
    this.count++
  }

  end(): void {
    this.count--
    if (this.count === 0) {
      const waiters = this.idleWaiters
      this.idleWaiters = []
      for (const wake of waiters) wake()
    }
  }

  track(fiber: Fiber.RuntimeFiber<unknown, unknown>): void {
    this.fibers.add(fiber)
    fiber.addObserver(() => this.fibers.delete(fiber))
  }

  /** Completes once no request is in flight. */
  readonly whenIdle: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (this.count === 0) return resume(Effect.void)
    const wake = () => resume(Effect.void)
    this.idleWaiters.push(wake)
    return Effect.sync(() => {
      this.idleWaiters = this.idleWaiters.filter((w) => w !== wake)
    })
  })

  /** Interrupts the handlers still running (after the drain deadline). */
  interruptAll(): void {
    for (const fiber of this.fibers) fiber.unsafeInterruptAsFork(FiberId.none)
  }
}
