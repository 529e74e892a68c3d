import { expect } from "vitest"
import { farOption } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectOk } from "../Shapes.js"
import type { World } from "../World.js"

/**
 * `POST /v1/block-trade/bulk` from outside: replays of a nonce, credentials of another desk named
 * `<counterpartyId>:<alias>`, and one request whose block trades end differently. Every answer is
 * checked against the documented shape; our `blockTradeId` is an integer, the venue's id is in
 * `exchangeResult`.
 */

interface BulkAnswer {
  readonly nonce: string
  readonly blockTradeId?: number
  readonly exchangeResult?: {
    readonly exchange: string
    readonly exchangeBlockTradeId: string
    readonly trades: ReadonlyArray<{ direction: string; amount: number; exchangeTradeId: string }>
  }
  readonly exchangeError?: { readonly message: string; readonly reason?: ReadonlyArray<string> }
}

interface BlockTradeSpec {
  readonly nonce: string
  readonly maker: string
  readonly taker?: string
  readonly instrumentName?: string
}

const send = async (w: World, specs: ReadonlyArray<BlockTradeSpec>) =>
  expectOk<Array<BulkAnswer>>(
    await w.api.post("/v1/block-trade/bulk", {
      token: w.token("taker"),
      json: {
        timestamp: Date.now(),
        blockTrades: specs.map((s) => ({
          nonce: s.nonce,
          makerExchangeCredentials: s.maker,
          takerExchangeCredentials: s.taker ?? "dbt-main",
          trades: [
            {
              direction: "sell",
              instrumentName: s.instrumentName ?? farOption(90000),
              price: 0.6,
              amount: 25
            }
          ]
        }))
      }
    }),
    "BulkBlockTradeResponse"
  )

/** What happened to each block trade: "executed" or the error's message. */
const outcomes = (answer: ReadonlyArray<BulkAnswer>) =>
  answer.map((a) => [
    a.nonce,
    a.exchangeError?.message ?? (a.exchangeResult === undefined ? "?" : "executed")
  ])

const executedIds = (answer: ReadonlyArray<BulkAnswer>) =>
  answer.flatMap((a) => (a.blockTradeId === undefined ? [] : [a.blockTradeId]))

/** The taker desk's OTC counterparty named `name` (demo data: every desk lists every other). */
const counterpartyId = async (w: World, name: string) => {
  const list = expectOk<Array<{ id: number; name: string }>>(
    await w.api.get("/v1/account/otc-counterparty", { token: w.token("taker") }),
    "OtcCounterpartyList"
  )
  const found = list.find((c) => c.name === name)
  if (found === undefined) throw new Error(`no counterparty named ${name}: ${JSON.stringify(list)}`)
  return found.id
}

export const bulkBlockTrades = group("bulk block trades", [
  scenario("a replayed nonce is refused, alone or among new ones, and never executes twice", async (w) => {
    const nonce = `replay-${w.tag}`
    const [first] = await send(w, [{ nonce, maker: "dbt-alt" }])
    expect(first).toMatchObject({ nonce, exchangeResult: { exchange: "DBT" } })
    expect(Number.isSafeInteger(first?.blockTradeId)).toBe(true)
    expect(first?.exchangeResult?.exchangeBlockTradeId).toEqual(expect.any(String))
    expect(first?.exchangeResult?.trades).toMatchObject([{ direction: "sell", amount: 25 }])

    const alone = await send(w, [{ nonce, maker: "dbt-alt" }])
    expect(alone).toEqual([
      { nonce, exchangeError: { message: "invalid request", reason: [`nonce ${nonce} was already used`] } }
    ])
    // Another body under the same nonce is no way around it either.
    const among = await send(w, [
      { nonce: `${nonce}-new`, maker: "dbt-alt" },
      { nonce, maker: "dbt-main", taker: "dbt-alt" }
    ])
    expect(outcomes(among)).toEqual([
      [`${nonce}-new`, "executed"],
      [nonce, "invalid request"]
    ])
    expect(among[1]).not.toHaveProperty("exchangeResult")
    expect(among[1]).not.toHaveProperty("blockTradeId")
    // Ids are ours, integers, never reused.
    expect(new Set([first!.blockTradeId, ...executedIds(among)]).size).toBe(2)
  }),

  scenario(
    "a counterparty's credentials as `<id>:<alias>`; names the desk may not use are `credentials not found`",
    async (w) => {
      const maker1 = await counterpartyId(w, "Demo Maker 1")
      const maker3 = await counterpartyId(w, "Demo Maker 3")
      const answer = await send(w, [
        { nonce: `cross-${w.tag}-1`, maker: `${maker1}:dbt-main` },
        { nonce: `cross-${w.tag}-2`, maker: `${maker1}:no-such-alias` },
        // Maker 3 has no BULL credentials.
        { nonce: `cross-${w.tag}-3`, maker: `${maker3}:bull-main`, taker: "bull-main" },
        // Not a counterparty of the taker desk (no such desk).
        { nonce: `cross-${w.tag}-4`, maker: "2147483000:dbt-main" },
        // Both sides on another desk's credentials, same exchange: allowed, the caller arranges it.
        { nonce: `cross-${w.tag}-5`, maker: `${maker1}:dbt-main`, taker: `${maker3}:dbt-main` },
        // Credentials for two different exchanges.
        { nonce: `cross-${w.tag}-6`, maker: `${maker1}:bull-main`, taker: "dbt-main" }
      ])
      expect(outcomes(answer)).toEqual([
        [`cross-${w.tag}-1`, "executed"],
        [`cross-${w.tag}-2`, "credentials not found"],
        [`cross-${w.tag}-3`, "credentials not found"],
        [`cross-${w.tag}-4`, "credentials not found"],
        [`cross-${w.tag}-5`, "executed"],
        [`cross-${w.tag}-6`, "invalid request"]
      ])
      expect(answer[5]?.exchangeError?.reason?.[0]).toContain("same exchange")
      // A name refused before the venue was called leaves its nonce free.
      const retried = await send(w, [{ nonce: `cross-${w.tag}-2`, maker: `${maker1}:dbt-main` }])
      expect(outcomes(retried)).toEqual([[`cross-${w.tag}-2`, "executed"]])
    }
  ),

  scenario("one request, mixed outcomes: each block trade is answered on its own, in order", async (w) => {
    const n = (i: number) => `mixed-${w.tag}-${i}`
    const answer = await send(w, [
      { nonce: n(1), maker: "dbt-alt" },
      // dbt-flaky passes the simulation but every execution fails.
      { nonce: n(2), maker: "dbt-alt", taker: "dbt-flaky" },
      { nonce: n(3), maker: "no-such-alias" },
      { nonce: n(4), maker: "dbt-alt", instrumentName: "BTC-27DEC30-1-C" },
      { nonce: n(5), maker: "dbt-main", taker: "dbt-alt" }
    ])
    expect(outcomes(answer)).toEqual([
      [n(1), "executed"],
      [n(2), "the venue refused the block trade"],
      [n(3), "credentials not found"],
      [n(4), "instrument not found for leg"],
      [n(5), "executed"]
    ])
    for (const a of answer) {
      // Exactly one of a result (with our id) and an error.
      expect(a.blockTradeId === undefined).toBe(a.exchangeResult === undefined)
      expect(a.exchangeError === undefined).toBe(a.exchangeResult !== undefined)
    }
    const ids = executedIds(answer)
    expect(ids).toHaveLength(2)
    expect(ids[1]).not.toBe(ids[0])
    // The venue was asked for n(2): its nonce is spent, a retry is refused and not executed.
    const retry = await send(w, [{ nonce: n(2), maker: "dbt-alt" }])
    expect(outcomes(retry)).toEqual([[n(2), "invalid request"]])
  })
])
