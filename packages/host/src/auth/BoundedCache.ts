/**
 * A map with a size bound and a per-entry expiry, for the auth hot paths (verified tokens, account
 * status). When full, the oldest insertion goes first: a flood of distinct keys can only push out
 * entries, never grow memory. Expired entries are dropped when looked up; the size bound takes
 * care of the ones never looked up again. Time is passed in, so callers use the Effect clock.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, { readonly value: V; readonly expiresAt: number }>()

  constructor(readonly maxEntries: number) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1)
      throw new Error("maxEntries must be a positive integer")
  }

  get size(): number {
    return this.entries.size
  }

  /** The value stored under `key` if it has not expired at `now`. */
  get(key: K, now: number): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (now >= entry.expiresAt) {
      this.entries.delete(key)
      return undefined
    }
    return entry.value
  }

  /** Stores `value` until `expiresAt` (exclusive), evicting the oldest entries beyond the bound. */
  set(key: K, value: V, expiresAt: number): void {
    // Re-inserting moves the key to the young end, so the bound evicts by age of the last write.
    this.entries.delete(key)
    this.entries.set(key, { value, expiresAt })
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next()
      if (oldest.done === true) break
      this.entries.delete(oldest.value)
    }
  }

  delete(key: K): void {
    this.entries.delete(key)
  }

  clear(): void {
    this.entries.clear()
  }
}
