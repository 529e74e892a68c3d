import { Effect } from "effect"

/**
 * A read-through cache for reference data that changes rarely (exchange credentials, makers),
 * read on every RFQ, quote and settlement. Entries live `ttlMillis` (writers in other processes,
 * such as the admin command, are seen within that time); the store's own writes call `clear()`,
 * which also keeps a read that was in flight during the write from storing what it saw. The
 * number of entries is bounded: past `maxEntries` the oldest go first, so a flood of distinct
 * keys (unknown ids) cannot grow memory.
 */
export class ReadCache<K, V> {
  private readonly entries = new Map<K, { readonly value: V; readonly expiresAt: number }>()
  private generation = 0

  constructor(
    readonly ttlMillis: number,
    readonly maxEntries: number
  ) {}

  /** The cached value of `key`, or `load`'s (stored unless a write cleared the cache meanwhile). */
  get<E, R>(key: K, load: Effect.Effect<V, E, R>): Effect.Effect<V, E, R> {
    return Effect.clockWith((clock) => {
      const now = clock.unsafeCurrentTimeMillis()
      const entry = this.entries.get(key)
      if (entry !== undefined && now < entry.expiresAt) return Effect.succeed(entry.value)
      const generation = this.generation
      return Effect.tap(load, (value) =>
        Effect.sync(() => {
          if (generation !== this.generation) return
          this.entries.delete(key)
          this.entries.set(key, { value, expiresAt: now + this.ttlMillis })
          while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!)
        })
      )
    })
  }

  /** Forgets everything: after any write to the data behind the cache. */
  clear(): void {
    this.generation++
    this.entries.clear()
  }

  get size(): number {
    return this.entries.size
  }
}
