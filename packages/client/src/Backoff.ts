/**
 * Reconnection delays: exponential from `initialDelayMs`, capped at `maxDelayMs`, with "equal
 * jitter" (a uniform draw from the upper half of the bound): many clients dropped at once by a
 * restart do not all come back in the same instant, and none retries at once in a tight loop.
 */
export interface BackoffOptions {
  readonly initialDelayMs?: number
  readonly maxDelayMs?: number
}

export const DEFAULT_INITIAL_DELAY_MS = 250
export const DEFAULT_MAX_DELAY_MS = 30_000

/** The delay before reconnection attempt `attempt` (0 for the first), in ms. */
export const backoffDelayMs = (
  attempt: number,
  options: BackoffOptions = {},
  random: () => number = Math.random
): number => {
  const initial = options.initialDelayMs ?? DEFAULT_INITIAL_DELAY_MS
  const max = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS
  const bound = Math.min(max, initial * 2 ** Math.min(attempt, 30))
  return Math.round(bound / 2 + random() * (bound / 2))
}
