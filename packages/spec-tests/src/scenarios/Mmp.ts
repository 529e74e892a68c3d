import { expect } from "vitest"
import { createRfq, quoteBody, rfqBody, sleep, trade } from "../Fixtures.js"
import { expectRpcError } from "../RpcExpect.js"
import { openRpcSession, type RpcSession, withRpcSession } from "../RpcSession.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { World } from "../World.js"

/**
 * Issue 16, item 1, black-box: market-maker protection over REST and JSON-RPC. Config CRUD with
 * hostile input and roles; a trip (the desk's quotes cancelled, `mmp frozen` on create and update
 * over both transports, a session subscribed before hears the trip and the thaw), a reset, and a
 * thaw by time. The scenarios use maker-2's desk and leave it without protection. Waits poll
 * without asserting on time.
 */

interface Status {
  baseCurrency: string
  frozen: boolean
  frozenUntil?: number
  window: { amount: number; delta: number; trades: number }
}

const maker = "maker2" as const

const status = async (w: World): Promise<Array<Status>> =>
  expectOk<Array<Status>>(await w.api.get("/v1/mmp/status", { token: w.token(maker) }), "MmpStatusList")

/** Leaves the desk without protection in BTC (a deployment may hold one from an earlier run). */
const unprotect = async (w: World) => {
  await w.api.delete("/v1/mmp/config", { token: w.token(maker), query: { baseCurrency: "BTC" } })
}

const until = async (what: string, done: () => Promise<boolean> | boolean) => {
  for (let attempt = 0; attempt < 150; attempt++) {
    if (await done()) return
    await sleep(100)
  }
  throw new Error(`never: ${what}`)
}

/** The `data` of the notifications on `channel` the session received so far. */
const heard = (session: RpcSession, channel: string) =>
  session.connection.notifications
    .map((n) => (n as { params?: { channel?: string; data?: Record<string, unknown> } }).params)
    .filter((p) => p?.channel === channel)
    .map((p) => p!.data!)

const quoteStatus = async (w: World, rfqId: number, quoteId: number) => {
  const page = expectOk<{ results: Array<{ rfqQuoteId: number; status: string }> }>(
    await w.api.get("/v1/rfq/quotes", { token: w.token(maker), query: { rfqId } }),
    "QuotePage"
  )
  return page.results.find((q) => q.rfqQuoteId === quoteId)?.status
}

/** An RFQ and maker-2's ask on it. */
const quoted = async (w: World) => {
  const rfqId = await createRfq(w, "taker", rfqBody(w, "taker"))
  const body = await quoteBody(w, maker, rfqId, { direction: "sell", amount: 100 })
  const { rfqQuoteId } = expectOk<{ rfqQuoteId: number }>(
    await w.api.post("/v1/rfq/quote", { token: w.token(maker), json: body }),
    "CreateQuoteResponse"
  )
  return { rfqId, quoteId: rfqQuoteId, body }
}

export const mmp = group("market-maker protection", [
  scenario(
    "config over REST and JSON-RPC: create, read, replace, delete; hostile input and roles refused",
    async (w) => {
      await unprotect(w)
      const put = (json: unknown, party: "maker2" | "taker" | "viewer" = maker) =>
        w.api.put("/v1/mmp/config", { token: w.token(party), json })
      const base = { baseCurrency: "BTC", intervalMs: 1000, frozenMs: 0 }
      const refused = async (json: unknown, reason: string, message = "invalid request") =>
        expectError(await put(json), { status: 400, message, reasonIncludes: [reason] })
      await refused(base, "at least one of amountLimit, deltaLimit, tradeCountLimit")
      await refused({ ...base, tradeCountLimit: 0 }, "tradeCountLimit: must be an integer from 1")
      await refused({ ...base, tradeCountLimit: "3" }, "tradeCountLimit: expected an integer")
      await refused(
        { ...base, intervalMs: 0, amountLimit: 1 },
        "intervalMs: must be an integer from 1 to 86400000"
      )
      await refused({ ...base, intervalMs: 86_400_001, amountLimit: 1 }, "intervalMs")
      await refused({ ...base, frozenMs: -5, amountLimit: 1 }, "frozenMs")
      await refused({ ...base, frozenMs: 1.5, amountLimit: 1 }, "frozenMs")
      await refused({ ...base, amountLimit: -1 }, "amountLimit: must be greater than 0")
      await refused({ ...base, deltaLimit: 1e300 }, "deltaLimit")
      await refused({ ...base, deltaLimit: 0.000000001 }, "deltaLimit: must have at most 8 decimal places")
      await refused({ ...base, baseCurrency: "DOGE", amountLimit: 1 }, "baseCurrency")
      await refused({ ...base, baseCurrency: "", amountLimit: 1 }, "baseCurrency", "empty value")
      await refused([base], "must be a JSON object")
      expectError(await put({ ...base, amountLimit: 1 }, "taker"), {
        status: 403,
        message: "insufficient permissions"
      })
      expectError(await put({ ...base, amountLimit: 1 }, "viewer"), {
        status: 403,
        message: "insufficient permissions"
      })
      // A desk that is not a maker has no protection: its reads are empty.
      expect(
        expectOk(await w.api.get("/v1/mmp/status", { token: w.token("viewer") }), "MmpStatusList")
      ).toEqual([])

      const created = expectOk(await put({ ...base, amountLimit: 12.5, deltaLimit: 0.25 }), "MmpConfig")
      expect(created).toEqual({ ...base, amountLimit: 12.5, deltaLimit: 0.25 })
      expect(expectOk(await put({ ...base, tradeCountLimit: 3 }), "MmpConfig")).toEqual({
        ...base,
        tradeCountLimit: 3
      })
      expect(expectOk(await w.api.get("/v1/mmp/config", { token: w.token(maker) }), "MmpConfigList")).toEqual(
        [{ ...base, tradeCountLimit: 3 }]
      )
      expect(await status(w)).toEqual([
        { baseCurrency: "BTC", frozen: false, window: { amount: 0, delta: 0, trades: 0 } }
      ])
      // Another desk sees none of it.
      expect(
        expectOk(await w.api.get("/v1/mmp/config", { token: w.token("maker3") }), "MmpConfigList")
      ).not.toContainEqual(expect.objectContaining({ tradeCountLimit: 3, intervalMs: 1000 }))
      for (const query of [{}, { baseCurrency: "XRP" }, { baseCurrency: "" }]) {
        const answer = await w.api.delete("/v1/mmp/config", { token: w.token(maker), query })
        expect(answer.status, answer.text).toBe(400)
      }
      expect(
        expectOk(
          await w.api.delete("/v1/mmp/config", { token: w.token(maker), query: { baseCurrency: "BTC" } }),
          "MmpDeleteResponse"
        )
      ).toEqual({ message: "mmp config for BTC deleted" })
      expectError(
        await w.api.delete("/v1/mmp/config", { token: w.token(maker), query: { baseCurrency: "BTC" } }),
        {
          status: 404,
          message: "record not found"
        }
      )

      await withRpcSession(w, maker, async (rpc) => {
        expectRpcError(await rpc.call("v1/mmp/config/set", { ...base, intervalMs: "soon", amountLimit: 1 }), {
          code: -32602,
          message: "invalid request",
          status: 400,
          reasonIncludes: ["intervalMs"]
        })
        expectRpcError(await rpc.call("v1/mmp/config/set", base), {
          code: -32602,
          message: "invalid request",
          status: 400,
          reasonIncludes: ["at least one of"]
        })
        expect(await rpc.result("v1/mmp/config/set", { ...base, amountLimit: 7 })).toEqual({
          ...base,
          amountLimit: 7
        })
        expect(await rpc.result("v1/mmp/config", {})).toEqual([{ ...base, amountLimit: 7 }])
        expect(await rpc.result("v1/mmp/status", {})).toEqual([
          { baseCurrency: "BTC", frozen: false, window: { amount: 0, delta: 0, trades: 0 } }
        ])
        expect(await rpc.result("v1/mmp/config/delete", { baseCurrency: "BTC" })).toEqual({
          message: "mmp config for BTC deleted"
        })
        expectRpcError(await rpc.call("v1/mmp/reset", { baseCurrency: "BTC" }), {
          code: -32004,
          message: "record not found",
          status: 404
        })
      })
      await withRpcSession(w, "viewer", async (rpc) => {
        expectRpcError(await rpc.call("v1/mmp/config/set", { ...base, amountLimit: 7 }), {
          code: -32003,
          message: "insufficient permissions",
          status: 403
        })
      })
    }
  ),

  scenario(
    "a trip cancels the desk's BTC quotes, refuses creates and updates with `mmp frozen` on both transports, is heard on mmp.maker by a session opened before; a reset thaws it",
    async (w) => {
      await unprotect(w)
      const listener = await openRpcSession(w, maker)
      try {
        await listener.result("v1/subscribe", { channels: ["mmp.maker.BTC", "mmp.maker.ETH"] })
        expectOk(
          await w.api.put("/v1/mmp/config", {
            token: w.token(maker),
            json: { baseCurrency: "BTC", intervalMs: 600_000, frozenMs: 0, tradeCountLimit: 1 }
          }),
          "MmpConfig"
        )
        const [first, second, third] = [await quoted(w), await quoted(w), await quoted(w)]
        await trade(w, "taker", first.quoteId)

        await until("the trip on mmp.maker.BTC", () => heard(listener, "mmp.maker.BTC").length > 0)
        expect(heard(listener, "mmp.maker.BTC")[0]).toMatchObject({
          event: "tripped",
          baseCurrency: "BTC",
          frozen: true,
          limit: "tradeCount",
          window: { amount: 100, trades: 1 }
        })
        expect(heard(listener, "mmp.maker.BTC")[0]).not.toHaveProperty("frozenUntil")
        expect(heard(listener, "mmp.maker.ETH")).toEqual([])
        await until(
          "the desk's other BTC quotes cancelled",
          async () =>
            (await quoteStatus(w, second.rfqId, second.quoteId)) === "cancelled" &&
            (await quoteStatus(w, third.rfqId, third.quoteId)) === "cancelled"
        )
        const [frozen] = await status(w)
        expect(frozen).toMatchObject({
          baseCurrency: "BTC",
          frozen: true,
          window: { amount: 100, trades: 1 }
        })
        expect(frozen).not.toHaveProperty("frozenUntil")

        expectError(await w.api.post("/v1/rfq/quote", { token: w.token(maker), json: second.body }), {
          status: 400,
          message: "mmp frozen"
        })
        const { rfqId: _, direction: __, ...update } = second.body
        expectError(
          await w.api.put("/v1/rfq/quote", {
            token: w.token(maker),
            json: { ...update, rfqQuoteId: second.quoteId }
          }),
          { status: 400, message: "mmp frozen" }
        )
        expectRpcError(await listener.call("v1/quote/create", third.body), {
          code: -32602,
          message: "mmp frozen",
          status: 400
        })
        expectRpcError(await listener.call("v1/quote/update", { ...update, rfqQuoteId: third.quoteId }), {
          code: -32602,
          message: "mmp frozen",
          status: 400
        })
        // Another desk still quotes.
        const otherDesk = await quoteBody(w, "maker1", second.rfqId, { direction: "sell", amount: 100 })
        expectOk(
          await w.api.post("/v1/rfq/quote", { token: w.token("maker1"), json: otherDesk }),
          "CreateQuoteResponse"
        )

        const reset = expectOk<Status>(
          await w.api.post("/v1/mmp/reset", { token: w.token(maker), json: { baseCurrency: "BTC" } }),
          "MmpStatus"
        )
        expect(reset).toEqual({
          baseCurrency: "BTC",
          frozen: false,
          window: { amount: 0, delta: 0, trades: 0 }
        })
        await until("the thaw on mmp.maker.BTC", () => heard(listener, "mmp.maker.BTC").length > 1)
        expect(heard(listener, "mmp.maker.BTC")[1]).toEqual({
          event: "thawed",
          baseCurrency: "BTC",
          frozen: false,
          by: "reset"
        })
        expect(
          typeof (await listener.result<{ rfqQuoteId: number }>("v1/quote/create", second.body)).rfqQuoteId
        ).toBe("number")
      } finally {
        listener.close()
        await unprotect(w)
      }
    }
  ),

  scenario("a freeze with an end thaws by itself: status and channel say so (JSON-RPC)", async (w) => {
    await unprotect(w)
    await withRpcSession(w, maker, async (rpc) => {
      await rpc.result("v1/subscribe", { channels: ["mmp.maker"] })
      await rpc.result("v1/mmp/config/set", {
        baseCurrency: "BTC",
        intervalMs: 600_000,
        frozenMs: 3000,
        amountLimit: 50
      })
      const { quoteId } = await quoted(w)
      await trade(w, "taker", quoteId)
      const [frozen] = await rpc.result<Array<Status>>("v1/mmp/status", {})
      expect(frozen).toMatchObject({ frozen: true, window: { amount: 100, trades: 1 } })
      expect(typeof frozen!.frozenUntil).toBe("number")
      await until("the thaw", async () => !(await rpc.result<Array<Status>>("v1/mmp/status", {}))[0]!.frozen)
      await until("the thaw on mmp.maker", () => heard(rpc, "mmp.maker").some((n) => n.event === "thawed"))
      expect(heard(rpc, "mmp.maker").map((n) => n.event)).toEqual(["tripped", "thawed"])
      expect(heard(rpc, "mmp.maker")[1]).toMatchObject({ by: "time" })
      expect((await rpc.result<Array<Status>>("v1/mmp/status", {}))[0]!.window).toEqual({
        amount: 0,
        delta: 0,
        trades: 0
      })
      await quoted(w)
    })
    await unprotect(w)
  })
])
