/**
 * What recent header texts (an `Authorization: Bearer <token>` value) stood for, found without
 * hashing them: a fixed number of slots, each text in the slot its last two characters pick, kept
 * only while nothing else lands there. A hit is an exact comparison with the kept text (the same
 * bytes), so it answers only what an exact-key map would; a miss costs the caller its usual path.
 *
 * Why not a `Map`: uWS hands over every header as a new string, and a map must hash all of it
 * (300 characters for a token) before it can compare; two character reads pick the slot here. The
 * last characters of a token are its signature's, so its slot is as good as random.
 */
export class HeaderMemo<V> {
  private readonly texts: Array<string | undefined>
  private readonly values: Array<V | undefined>
  private readonly mask: number

  /** `slots`: a power of two. */
  constructor(slots = 256) {
    if (!Number.isSafeInteger(slots) || slots < 1 || (slots & (slots - 1)) !== 0)
      throw new Error("slots must be a power of two")
    this.mask = slots - 1
    this.texts = new Array(slots).fill(undefined)
    this.values = new Array(slots).fill(undefined)
  }

  private slotOf(text: string): number {
    const n = text.length
    return (n < 2 ? n : text.charCodeAt(n - 1) * 31 + text.charCodeAt(n - 2)) & this.mask
  }

  /** The value kept for exactly `text`, if it is still kept. */
  get(text: string): V | undefined {
    const slot = this.slotOf(text)
    return this.texts[slot] === text ? this.values[slot] : undefined
  }

  /** Keeps `value` for `text`, in place of whatever its slot held. */
  set(text: string, value: V): void {
    const slot = this.slotOf(text)
    this.texts[slot] = text
    this.values[slot] = value
  }

  /** Forgets `text`, if kept. */
  delete(text: string): void {
    const slot = this.slotOf(text)
    if (this.texts[slot] === text) {
      this.texts[slot] = undefined
      this.values[slot] = undefined
    }
  }

  clear(): void {
    this.texts.fill(undefined)
    this.values.fill(undefined)
  }
}
