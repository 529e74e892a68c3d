import { expect } from "vitest"
import { createRfq, farOption, getRfq, rfqBody } from "../Fixtures.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { World } from "../World.js"

/** Account, makers, instruments and bulk block trades. */

interface Credentials {
  alias: string
  credentialsId: number
  exchange: string
  exchangeId: number
  exchangeShortCode: string
  isExchangeDefault: boolean
}

const credentialsList = async (w: World, party: "taker" | "maker1") =>
  expectOk<Array<Credentials>>(
    await w.api.get("/v1/account/exchange-credentials", { token: w.token(party) }),
    "ExchangeCredentialsList"
  )

export const account = group("account, makers, instruments, bulk block trades", [
  scenario(
    "the demo taker's exchange credentials: a bare array, the single item with its decrypted secret",
    async (w) => {
      const list = await credentialsList(w, "taker")
      const byAlias = new Map(list.map((c) => [c.alias, c]))
      expect(byAlias.get("dbt-main")).toMatchObject({ exchangeShortCode: "DBT", isExchangeDefault: true })
      expect(byAlias.get("dbt-alt")).toMatchObject({ exchangeShortCode: "DBT", isExchangeDefault: false })
      expect(byAlias.get("dbt-flaky")).toMatchObject({ exchangeShortCode: "DBT", isExchangeDefault: false })
      expect(byAlias.get("bull-main")).toMatchObject({ exchangeShortCode: "BULL", isExchangeDefault: true })
      const main = byAlias.get("dbt-main")!
      const detail = expectOk<Record<string, unknown>>(
        await w.api.get(`/v1/account/exchange-credentials/${main.credentialsId}`, {
          token: w.token("taker")
        }),
        "ExchangeCredentialsDetail"
      )
      expect(detail).toMatchObject({
        alias: "dbt-main",
        credentialsId: main.credentialsId,
        exchangeId: main.exchangeId,
        isExchangeDefault: true,
        clientId: expect.any(String),
        clientSecret: expect.any(String)
      })
      // Another desk's credentials do not exist for the caller.
      expectError(
        await w.api.get(`/v1/account/exchange-credentials/${w.credentialsId("maker1", "dbt-main")}`, {
          token: w.token("taker")
        }),
        { status: 404, message: "credentials not found" }
      )
      expectError(
        await w.api.get("/v1/account/exchange-credentials/2000000000", { token: w.token("taker") }),
        {
          status: 404,
          message: "credentials not found"
        }
      )
      expectError(await w.api.get("/v1/account/exchange-credentials/abc", { token: w.token("taker") }), {
        status: 400,
        message: "invalid request"
      })
    }
  ),

  scenario("create, read and delete exchange credentials; an alias is unique per desk", async (w) => {
    const alias = `spec-${w.tag}`
    const body = { alias, exchange: "DBT", clientId: `client-${w.tag}`, clientSecret: `secret-${w.tag}` }
    const created = expectOk<{ credentialsId: number }>(
      await w.api.post("/v1/account/exchange-credentials", { token: w.token("maker1"), json: body }),
      "CreateExchangeCredentialsResponse"
    )
    expect((await credentialsList(w, "maker1")).find((c) => c.alias === alias)).toMatchObject({
      credentialsId: created.credentialsId,
      exchangeShortCode: "DBT",
      isExchangeDefault: false
    })
    expect(
      expectOk(
        await w.api.get(`/v1/account/exchange-credentials/${created.credentialsId}`, {
          token: w.token("maker1")
        }),
        "ExchangeCredentialsDetail"
      )
    ).toMatchObject({ alias, clientId: body.clientId, clientSecret: body.clientSecret })
    expectError(
      await w.api.post("/v1/account/exchange-credentials", { token: w.token("maker1"), json: body }),
      {
        status: 400,
        message: "exchange credentials with the same alias already exists"
      }
    )
    expectError(
      await w.api.post("/v1/account/exchange-credentials", {
        token: w.token("maker1"),
        json: { ...body, alias: "dbt-main" }
      }),
      {
        status: 400,
        message: "exchange credentials with the same alias already exists"
      }
    )
    // Another desk may use the alias.
    const other = expectOk<{ credentialsId: number }>(
      await w.api.post("/v1/account/exchange-credentials", { token: w.token("maker2"), json: body }),
      "CreateExchangeCredentialsResponse"
    )
    expectError(
      await w.api.post("/v1/account/exchange-credentials", {
        token: w.token("maker1"),
        json: { ...body, exchange: "FTX", alias: `x-${w.tag}` }
      }),
      {
        status: 404,
        message: "exchange not found"
      }
    )
    expectError(
      await w.api.post("/v1/account/exchange-credentials", {
        token: w.token("maker1"),
        json: { ...body, alias: "" }
      }),
      {
        status: 400,
        message: "empty value"
      }
    )

    // A desk cannot delete another desk's credentials.
    expectError(
      await w.api.delete(`/v1/account/exchange-credentials/${other.credentialsId}`, {
        token: w.token("maker1")
      }),
      {
        status: 404,
        message: "credentials not found"
      }
    )
    for (const [party, id] of [
      ["maker1", created.credentialsId],
      ["maker2", other.credentialsId]
    ] as const) {
      expect(
        expectOk(
          await w.api.delete(`/v1/account/exchange-credentials/${id}`, { token: w.token(party) }),
          "DeleteExchangeCredentialsResponse"
        )
      ).toEqual({ credentialsId: id })
      expectError(await w.api.get(`/v1/account/exchange-credentials/${id}`, { token: w.token(party) }), {
        status: 404,
        message: "credentials not found"
      })
      expectError(await w.api.delete(`/v1/account/exchange-credentials/${id}`, { token: w.token(party) }), {
        status: 404,
        message: "credentials not found"
      })
    }
    expect((await credentialsList(w, "maker1")).map((c) => c.alias)).not.toContain(alias)
  }),

  scenario("OTC counterparties: each demo desk lists the others", async (w) => {
    const names = async (party: "taker" | "maker1") =>
      expectOk<Array<{ id: number; name: string }>>(
        await w.api.get("/v1/account/otc-counterparty", { token: w.token(party) }),
        "OtcCounterpartyList"
      ).map((c) => c.name)
    expect(await names("taker")).toEqual(
      expect.arrayContaining(["Demo Maker 1", "Demo Maker 2", "Demo Maker 3"])
    )
    const ofMaker = await names("maker1")
    expect(ofMaker).toEqual(expect.arrayContaining(["Demo Taker", "Demo Maker 2", "Demo Maker 3"]))
    expect(ofMaker).not.toContain("Demo Maker 1")
  }),

  scenario("makers with their settlement options", async (w) => {
    const makers = expectOk<Array<{ makerId: string; settlementOptions: Array<string> }>>(
      await w.api.get("/v1/exchange/maker", { token: w.token("taker") }),
      "MakerList"
    )
    const options = new Map(makers.map((m) => [m.makerId, [...m.settlementOptions].sort()]))
    expect(options.get("maker-1")).toEqual(["BULL", "DBT"])
    expect(options.get("maker-2")).toEqual(["BULL", "DBT"])
    expect(options.get("maker-3")).toEqual(["DBT"])
  }),

  scenario("instruments usable as legs, by exchange, base currency and kind", async (w) => {
    const list = async (query: Record<string, string>) =>
      expectOk<Array<{ instrumentName: string; kind: string; minBlockAmount: number }>>(
        await w.api.get("/v1/exchange/instruments", { token: w.token("taker"), query }),
        "InstrumentListings"
      )
    const options = await list({ exchange: "DBT", baseCurrency: "BTC", kind: "option" })
    expect(options.length).toBeGreaterThan(0)
    expect(new Set(options.map((i) => i.kind))).toEqual(new Set(["option"]))
    // A listed option is usable as a leg: an RFQ on it (at the venue's minimum block amount) is open.
    const listedOption = options[options.length - 1]!
    const rfqId = await createRfq(
      w,
      "taker",
      rfqBody(w, "taker", {
        amount: listedOption.minBlockAmount,
        legs: [{ direction: "buy", instrumentName: listedOption.instrumentName, ratio: 1 }]
      })
    )
    expect((await getRfq(w, "taker", rfqId)).legs[0]?.instrumentName).toBe(listedOption.instrumentName)
    const futures = await list({ exchange: "BULL", baseCurrency: "ETH", kind: "future" })
    expect(futures.length).toBeGreaterThan(0)
    for (const f of futures) expect(f.instrumentName.startsWith("ETH-")).toBe(true)
    // `kind=future` lists futures, perpetuals (no expiry) and future spreads.
    expect(new Set(futures.map((f) => f.kind))).toEqual(new Set(["future", "perpetual", "future_spread"]))
    expect(futures.find((f) => f.kind === "perpetual")).toMatchObject({ instrumentName: "ETH-PERPETUAL" })
    expect(futures.find((f) => f.kind === "perpetual")).not.toHaveProperty("expiry")
    expectError(
      await w.api.get("/v1/exchange/instruments", {
        token: w.token("taker"),
        query: { exchange: "FTX", baseCurrency: "BTC" }
      }),
      { status: 404, message: "exchange not found" }
    )
    expectError(
      await w.api.get("/v1/exchange/instruments", { token: w.token("taker"), query: { exchange: "DBT" } }),
      {
        status: 400,
        message: "invalid request",
        reasonIncludes: ["baseCurrency"]
      }
    )
  }),

  scenario("bulk block trades: one answer per block trade, a replayed nonce refused", async (w) => {
    const nonce = `bulk-${w.tag}`
    const blockTrade = (n: string, maker: string, taker: string) => ({
      nonce: n,
      makerExchangeCredentials: maker,
      takerExchangeCredentials: taker,
      trades: [{ direction: "sell", instrumentName: farOption(90000), price: 0.6, amount: 25 }]
    })
    const send = async (blockTrades: Array<unknown>) =>
      expectOk<
        Array<{ nonce: string; blockTradeId?: number; exchangeResult?: unknown; exchangeError?: unknown }>
      >(
        await w.api.post("/v1/block-trade/bulk", {
          token: w.token("taker"),
          json: { timestamp: Date.now(), blockTrades }
        }),
        "BulkBlockTradeResponse"
      )
    const answer = await send([
      blockTrade(nonce, "dbt-alt", "dbt-main"),
      blockTrade(`${nonce}-x`, "dbt-main", "bull-main")
    ])
    expect(answer.map((a) => a.nonce)).toEqual([nonce, `${nonce}-x`])
    expect(answer[0]).toMatchObject({ blockTradeId: expect.any(Number), exchangeResult: expect.anything() })
    expect(Number.isSafeInteger(answer[0]?.blockTradeId)).toBe(true)
    expect(answer[0]).not.toHaveProperty("exchangeError")
    expect(answer[1]).toMatchObject({ exchangeError: expect.anything() })
    expect(answer[1]).not.toHaveProperty("exchangeResult")
    const replay = await send([blockTrade(nonce, "dbt-alt", "dbt-main")])
    expect(replay[0]).toMatchObject({ nonce, exchangeError: expect.anything() })
    expect(replay[0]).not.toHaveProperty("blockTradeId")
    // A nonce twice in one request is refused before anything executes.
    expectError(
      await w.api.post("/v1/block-trade/bulk", {
        token: w.token("taker"),
        json: {
          timestamp: Date.now(),
          blockTrades: [
            blockTrade(`${nonce}-d`, "dbt-alt", "dbt-main"),
            blockTrade(`${nonce}-d`, "dbt-alt", "dbt-main")
          ]
        }
      }),
      { status: 400, message: "invalid request" }
    )
  })
])
