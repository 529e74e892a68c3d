import * as fs from "node:fs"

/**
 * What the service acknowledged, as seen by its clients: one JSON line per 200 answer, written
 * and fsync'd before the client moves on, so that the record outlives any crash of the host (and
 * of the test runner). The crash checks compare the database against it.
 */
export type Acknowledged =
  | { readonly t: "rfq"; readonly rfqId: number; readonly split: string }
  | { readonly t: "quote"; readonly rfqId: number; readonly quoteId: number }
  | { readonly t: "cancel"; readonly rfqId: number }
  | {
      readonly t: "trade"
      readonly rfqId: number
      readonly quoteId: number
      readonly tradeId: number
      readonly blockTradeIds: ReadonlyArray<string>
      readonly allocations: ReadonlyArray<string>
    }

export class Witness {
  private readonly fd: number
  count = 0

  constructor(readonly file: string) {
    this.fd = fs.openSync(file, "a", 0o600)
  }

  record(entry: Acknowledged): void {
    fs.writeSync(this.fd, `${JSON.stringify(entry)}\n`)
    fs.fsyncSync(this.fd)
    this.count++
  }

  close(): void {
    fs.closeSync(this.fd)
  }

  static read(file: string): Array<Acknowledged> {
    return fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Acknowledged)
  }
}

/** A small seeded PRNG (mulberry32), so a run's choices and kill moments replay from its seed. */
export const prng = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <A>(items: ReadonlyArray<A>): A => items[Math.floor(next() * items.length)]!
  }
}
