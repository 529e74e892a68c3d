import { describe, expect, it } from "@effect/vitest"
import { makeTurnBatch } from "../../src/cluster/TurnBatch.js"

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("TurnBatch", () => {
  it("makes the calls queued from separate callbacks of one turn together, in their order, after the turn", async () => {
    const batch = makeTurnBatch()
    const log: Array<string> = []
    const results: Array<Promise<number>> = []
    // Two callbacks of the same turn (each followed by its own microtasks, as two answers from
    // the database would be): neither call is made before the other was queued.
    await new Promise<void>((done) => {
      setImmediate(() => {
        log.push("queue 1")
        results.push(
          batch(async () => {
            log.push("call 1")
            return 1
          })
        )
      })
      setImmediate(() => {
        log.push("queue 2")
        results.push(
          batch(async () => {
            log.push("call 2")
            return 2
          })
        )
        done()
      })
    })
    expect(log).toEqual(["queue 1", "queue 2"])
    expect(await Promise.all(results)).toEqual([1, 2])
    expect(log).toEqual(["queue 1", "queue 2", "call 1", "call 2"])
  })

  it("rejects with what the call threw or rejected with, and the other calls of the batch go on", async () => {
    const batch = makeTurnBatch()
    const thrown = batch(() => {
      throw new Error("thrown")
    })
    const rejected = batch(() => Promise.reject(new Error("rejected")))
    const fine = batch(() => Promise.resolve("fine"))
    await expect(thrown).rejects.toThrow("thrown")
    await expect(rejected).rejects.toThrow("rejected")
    await expect(fine).resolves.toBe("fine")
  })

  it("a call queued while a batch is being made goes out in the next turn, not lost", async () => {
    const batch = makeTurnBatch()
    const log: Array<string> = []
    let later: Promise<string> | undefined
    const first = batch(async () => {
      log.push("first")
      later = batch(async () => {
        log.push("later")
        return "later"
      })
      return "first"
    })
    expect(await first).toBe("first")
    await nextTurn()
    expect(await later).toBe("later")
    expect(log).toEqual(["first", "later"])
  })
})
