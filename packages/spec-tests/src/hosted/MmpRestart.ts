import { expect } from "vitest"
import { ApiClient } from "../ApiClient.js"
import { createRfq, quoteBody, rfqBody, sleep, trade } from "../Fixtures.js"
import { openRpcSession } from "../RpcSession.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { MakerParty, World } from "../World.js"
import type { HostedContext } from "./HostControl.js"

/**
 * Market-maker protection across a restart (issue 16), one desk per case in BTC: maker-1 frozen
 * for a while (its thaw timer is armed again and fires after the restart: status and `mmp.maker`
 * on a session opened after it), maker-2 frozen until reset (still frozen, still refusing quotes,
 * until a reset after the restart), maker-3 with two fills in its window (they still count: a third
 * fill after the restart trips a limit of three). Every config reads back the same. Waits poll
 * without asserting on time.
 */

interface Status {
  baseCurrency: string
  frozen: boolean
  frozenUntil?: number
  window: { amount: number; delta: number; trades: number }
}

const makers: ReadonlyArray<MakerParty> = ["maker1", "maker2", "maker3"]
/** The timed freeze: long enough to outlast a restart, so that its timer must be armed again. */
const FROZEN_MS = 20_000

const btcStatus = async (w: World, maker: MakerParty): Promise<Status | undefined> =>
  expectOk<Array<Status>>(await w.api.get("/v1/mmp/status", { token: w.token(maker) }), "MmpStatusList").find(
    (s) => s.baseCurrency === "BTC"
  )

const configs = async (w: World, maker: MakerParty) =>
  expectOk(await w.api.get("/v1/mmp/config", { token: w.token(maker) }), "MmpConfigList")

/** An RFQ sent to every demo maker. */
const rfqForAll = (w: World) =>
  createRfq(w, "taker", rfqBody(w, "taker", { makers: { DBT: ["maker-1", "maker-2", "maker-3"] } }))

/** `maker`'s ask of 100 on a fresh RFQ (its body and id). */
const ask = async (w: World, maker: MakerParty) => {
  const rfqId = await rfqForAll(w)
  const body = await quoteBody(w, maker, rfqId, { direction: "sell", amount: 100 })
  const { rfqQuoteId } = expectOk<{ rfqQuoteId: number }>(
    await w.api.post("/v1/rfq/quote", { token: w.token(maker), json: body }),
    "CreateQuoteResponse"
  )
  return { rfqId, quoteId: rfqQuoteId, body }
}

/** One fill of `maker`'s ask of 100. */
const fill = async (w: World, maker: MakerParty) => trade(w, "taker", (await ask(w, maker)).quoteId)

const unprotect = async (w: World) => {
  for (const maker of makers)
    await w.api.delete("/v1/mmp/config", { token: w.token(maker), query: { baseCurrency: "BTC" } })
}

const configure = async (w: World, maker: MakerParty, config: Record<string, unknown>) =>
  expectOk(
    await w.api.put("/v1/mmp/config", {
      token: w.token(maker),
      json: { baseCurrency: "BTC", intervalMs: 3_600_000, ...config }
    }),
    "MmpConfig"
  )

export const mmpRestart = group<HostedContext>("market-maker protection across a restart", [
  scenario(
    "configs, a freeze until reset, a timed freeze and the window's fills survive a restart",
    async ({ world: given, host }) => {
      // An earlier restart in this run may have moved the host: its address now, not the world's.
      const w: World = { ...given, api: new ApiClient(host.url()) }
      await unprotect(w)
      try {
        await configure(w, "maker1", { frozenMs: FROZEN_MS, tradeCountLimit: 1 })
        await configure(w, "maker2", { frozenMs: 0, amountLimit: 100 })
        await configure(w, "maker3", { frozenMs: 0, tradeCountLimit: 3 })
        for (const maker of ["maker1", "maker2", "maker3", "maker3"] as const) await fill(w, maker)
        const timed = await btcStatus(w, "maker1")
        expect(timed).toMatchObject({ frozen: true, window: { trades: 1 } })
        const frozenUntil = timed!.frozenUntil!
        expect(typeof frozenUntil).toBe("number")
        expect(await btcStatus(w, "maker2")).toMatchObject({
          frozen: true,
          window: { amount: 100, trades: 1 }
        })
        const counting = await btcStatus(w, "maker3")
        expect(counting).toMatchObject({ frozen: false, window: { amount: 200, trades: 2 } })
        const before = await Promise.all(makers.map((m) => configs(w, m)))
        // Quoted after the restart, by the desks frozen now.
        const spare = await rfqForAll(w)

        await host.restart()
        const after: World = { ...w, api: new ApiClient(host.url()) }
        expect(await Promise.all(makers.map((m) => configs(after, m)))).toEqual(before)

        // The freeze until reset: still frozen, quotes refused, until a reset.
        const kept = await btcStatus(after, "maker2")
        expect(kept).toMatchObject({ frozen: true, window: { amount: 100, trades: 1 } })
        expect(kept).not.toHaveProperty("frozenUntil")
        const refused = await quoteBody(after, "maker2", spare, { direction: "sell", amount: 100 })
        expectError(await after.api.post("/v1/rfq/quote", { token: after.token("maker2"), json: refused }), {
          status: 400,
          message: "mmp frozen"
        })
        expect(
          expectOk<Status>(
            await after.api.post("/v1/mmp/reset", {
              token: after.token("maker2"),
              json: { baseCurrency: "BTC" }
            }),
            "MmpStatus"
          )
        ).toMatchObject({ frozen: false, window: { trades: 0 } })
        expectOk(
          await after.api.post("/v1/rfq/quote", { token: after.token("maker2"), json: refused }),
          "CreateQuoteResponse"
        )

        // The window's fills before the restart count after it: a third fill trips the limit of three.
        await fill(after, "maker3")
        expect(await btcStatus(after, "maker3")).toMatchObject({
          frozen: true,
          window: { amount: 300, trades: 3 }
        })

        // The timed freeze: its timer, armed again at start, thaws it; a session opened now hears it.
        const session = await openRpcSession(after, "maker1")
        try {
          await session.result("v1/subscribe", { channels: ["mmp.maker.BTC"] })
          const stillFrozen = (await btcStatus(after, "maker1"))!
          if (stillFrozen.frozen) {
            expect(stillFrozen.frozenUntil).toBe(frozenUntil)
            const thawed = () =>
              session.connection.notifications
                .map((n) => (n as { params?: { channel?: string; data?: { event?: string } } }).params)
                .filter((p) => p?.channel === "mmp.maker.BTC")
                .map((p) => p!.data)
            for (let attempt = 0; thawed().length === 0; attempt++) {
              if (attempt > 400) throw new Error("the re-armed thaw timer never fired")
              await sleep(100)
            }
            expect(thawed()).toEqual([{ event: "thawed", baseCurrency: "BTC", frozen: false, by: "time" }])
          }
          // Else the restart outlasted the freeze: the status alone says it ended.
          expect(await btcStatus(after, "maker1")).toEqual({
            baseCurrency: "BTC",
            frozen: false,
            window: { amount: 0, delta: 0, trades: 0 }
          })
          expectOk(
            await after.api.post("/v1/rfq/quote", {
              token: after.token("maker1"),
              json: await quoteBody(after, "maker1", spare, { direction: "sell", amount: 100 })
            }),
            "CreateQuoteResponse"
          )
        } finally {
          session.close()
        }
      } finally {
        await unprotect({ ...w, api: new ApiClient(host.url()) })
      }
    }
  )
])
