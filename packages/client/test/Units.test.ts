import { describe, expect, it } from "vitest"
import { backoffDelayMs } from "../src/Backoff.js"
import { RfqError, restError, rpcError } from "../src/RfqError.js"
import { SeqTracker } from "../src/SeqTracker.js"

describe("SeqTracker", () => {
  it("reports nothing for 1, 2, 3 and a jump as a gap", () => {
    const tracker = new SeqTracker()
    expect([1, 2, 3].map((seq) => tracker.next(seq))).toEqual([undefined, undefined, undefined])
    expect(tracker.next(6)).toEqual({ expected: 4, received: 6, kind: "seq" })
    expect(tracker.next(7)).toBeUndefined()
  })

  it("a reconnect is a gap from the old connection's next number; numbering starts again at 1", () => {
    const tracker = new SeqTracker()
    tracker.next(1)
    tracker.next(2)
    expect(tracker.reconnected()).toEqual({ expected: 3, received: 1, kind: "reconnect" })
    expect(tracker.next(1)).toBeUndefined()
  })
})

describe("backoffDelayMs", () => {
  it("doubles from the initial delay up to the cap, jittered within the upper half", () => {
    const options = { initialDelayMs: 100, maxDelayMs: 1000 }
    expect([0, 1, 2, 3, 4, 10].map((a) => backoffDelayMs(a, options, () => 0))).toEqual([
      50, 100, 200, 400, 500, 500
    ])
    expect([0, 1, 2, 3, 4, 10].map((a) => backoffDelayMs(a, options, () => 1))).toEqual([
      100, 200, 400, 800, 1000, 1000
    ])
  })
})

describe("RfqError", () => {
  it("keeps REST's status, code, message and reasons verbatim", () => {
    const error = restError(
      400,
      { code: 400, message: "invalid request", reason: ["amount: is missing"] },
      ""
    )
    expect(error).toBeInstanceOf(RfqError)
    expect([error.status, error.code, error.message, error.reasons]).toEqual([
      400,
      400,
      "invalid request",
      ["amount: is missing"]
    ])
  })

  it("a body that is not the spec's error body keeps the status and the text", () => {
    expect(restError(405, undefined, "Method Not Allowed\n")).toMatchObject({
      status: 405,
      code: 405,
      message: "Method Not Allowed"
    })
  })

  it("JSON-RPC: the status from data.status, else from the code; a rate limit is 429", () => {
    expect(
      rpcError({ code: -32004, message: "rfq not found", data: { status: 404, reason: [] } })
    ).toMatchObject({
      status: 404,
      code: -32004,
      message: "rfq not found"
    })
    expect(rpcError({ code: -32601, message: "Method not found" }).status).toBe(404)
    expect(
      rpcError({ code: -32603, message: "Rate limit exceeded", data: { limit: 3, window: "1m0s", reset: 1 } })
        .status
    ).toBe(429)
  })
})
