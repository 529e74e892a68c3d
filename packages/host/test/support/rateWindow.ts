import { Effect } from "effect"

/**
 * The rate limiters count in fixed windows aligned to the clock (a minute by default). A test
 * that uses up a budget on the wall clock and then expects a refusal breaks if a window boundary
 * falls in between, so it first waits, when fewer than `roomMs` remain of the current window,
 * for the next one to begin. The wait arranges the test; nothing is asserted about time.
 */
export const roomyWindow = (roomMs = 10_000, windowMs = 60_000): Effect.Effect<void> =>
  Effect.suspend(() => {
    const now = Date.now()
    const left = windowMs - (now % windowMs)
    return left >= roomMs ? Effect.void : Effect.sleep(left + 50)
  })
