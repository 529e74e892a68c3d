import { expect } from "vitest"
import { createRfq, farOption, getRfq, type RfqBody } from "../Fixtures.js"
import { expectRpcError } from "../RpcExpect.js"
import { withRpcSession } from "../RpcSession.js"
import { group, scenario } from "../Scenario.js"
import { expectError, expectOk } from "../Shapes.js"
import type { World } from "../World.js"

/**
 * A split the venue cannot settle is refused at creation, through the API: `POST /v1/rfq/{id}`
 * (and `v1/rfq/create`) answers 400 `invalid request` with a reason naming the account; nothing is
 * stored (the taker's RFQ list does not grow) and the request id is not used up (docs/api.md: a key
 * names the RFQ it created; a refused request created none), so the same key creates the corrected
 * RFQ afterwards.
 *
 * The account the venue refuses: a 2:1 call ratio (the short leg at ratio 0.5) of 152 BTC split
 * 34/33/33 over dbt-main, dbt-alt and dbt-flaky gives the accounts 51.8, 50.1 and 50.1 (split on the
 * 0.1 step, remainder to the largest share), hence short-leg amounts 25.9, 25.05 and 25.05: each at
 * least the minimum of 25, but 25.05 is off the venue's 0.1 amount step, which the venue's
 * block-trade check refuses (docs/venues.md, "Block trades"). dbt-main passes; dbt-alt is refused.
 * Whether the service finds it by simulating the block trade (split rule 5) or by checking the
 * amounts itself first (rule 4 with the step), the answer must name dbt-alt and its 25.05. The same
 * RFQ of 152.2 splits 51.8/50.2/50.2 (short legs 25.9, 25.1, 25.1) and is created.
 */

const ratioLegs = [
  { direction: "buy", instrumentName: farOption(90000), ratio: 1 },
  { direction: "sell", instrumentName: farOption(110000), ratio: 0.5 }
]

const splitBody = (w: World, amount: number): RfqBody => ({
  baseCurrency: "BTC",
  amount,
  anonymous: false,
  label: `rule5-${w.tag}`,
  settlementOptions: ["DBT"],
  settlementAccounts: {
    DBT: [
      { credentialsId: w.credentialsId("taker", "dbt-main"), percentage: 34 },
      { credentialsId: w.credentialsId("taker", "dbt-alt"), percentage: 33 },
      { credentialsId: w.credentialsId("taker", "dbt-flaky"), percentage: 33 }
    ]
  },
  makers: { DBT: ["maker-1"] },
  legs: ratioLegs
})

/** Refused: 25.05 of the short leg on dbt-alt (and dbt-flaky). */
const REFUSED_AMOUNT = 152
/** The same split where every account's short leg is on the step. */
const ACCEPTED_AMOUNT = 152.2

/** The reasons name dbt-alt and its 25.05 of the short leg, and never dbt-main, which is fine. */
const expectAltRefused = (w: World, reasons: ReadonlyArray<string>) => {
  const alt = w.credentialsId("taker", "dbt-alt")
  const main = w.credentialsId("taker", "dbt-main")
  const describe = JSON.stringify(reasons)
  expect(reasons.length, describe).toBeGreaterThan(0)
  expect(
    reasons.some((r) => r.includes(`credentialsId ${alt} `) && r.includes("25.05")),
    describe
  ).toBe(true)
  expect(
    reasons.some((r) => r.includes(`credentialsId ${main} `)),
    describe
  ).toBe(false)
}

const takerRfqCount = async (w: World): Promise<number> =>
  expectOk<{ totalResults: number }>(
    await w.api.get("/v1/rfq", { token: w.token("taker"), query: { role: "taker", limit: 1 } }),
    "RfqPage"
  ).totalResults

export const splitSimulation = group("split refused by the venue at creation", [
  scenario(
    "REST: a split account whose block trade the venue refuses fails the creation; nothing is stored and the key stays free",
    async (w) => {
      const requestId = w.nextRequestId()
      const before = await takerRfqCount(w)
      const refused = splitBody(w, REFUSED_AMOUNT)
      for (let attempt = 0; attempt < 2; attempt++) {
        // A retry with the same key and body is refused the same way: a refusal is not remembered.
        const response = await w.api.post(`/v1/rfq/${requestId}`, { token: w.token("taker"), json: refused })
        expectError(response, { status: 400, message: "invalid request" })
        expectAltRefused(w, (response.body as { reason: Array<string> }).reason)
      }
      expect(await takerRfqCount(w)).toBe(before)

      // The key was not used up: it creates the corrected RFQ, and from then on names that one.
      const rfqId = await createRfq(w, "taker", splitBody(w, ACCEPTED_AMOUNT), requestId)
      expect(await createRfq(w, "taker", splitBody(w, ACCEPTED_AMOUNT), requestId)).toBe(rfqId)
      expect(await takerRfqCount(w)).toBe(before + 1)
      const rfq = await getRfq(w, "taker", rfqId)
      expect(rfq).toMatchObject({ status: "open", amount: ACCEPTED_AMOUNT, strategy: "Call Ratio" })
      expect(rfq.legs.map((l) => l.amount)).toEqual([152.2, 76.1])
      expect(rfq.settlementCredentials).toEqual([
        { settlementOption: "DBT", credentialsId: w.credentialsId("taker", "dbt-main"), percentage: 34 },
        { settlementOption: "DBT", credentialsId: w.credentialsId("taker", "dbt-alt"), percentage: 33 },
        { settlementOption: "DBT", credentialsId: w.credentialsId("taker", "dbt-flaky"), percentage: 33 }
      ])
      // The refused body under the used key is now another body of that key: still a 400.
      expectError(await w.api.post(`/v1/rfq/${requestId}`, { token: w.token("taker"), json: refused }), {
        status: 400,
        message: "invalid request"
      })
      expect(await takerRfqCount(w)).toBe(before + 1)
    }
  ),

  scenario(
    "JSON-RPC: v1/rfq/create refuses the same split with -32602 and REST's reasons; nothing is stored and the key stays free",
    async (w) => {
      const requestId = w.nextRequestId()
      const before = await takerRfqCount(w)
      const refused = splitBody(w, REFUSED_AMOUNT)
      const rest = await w.api.post("/v1/rfq/0", { token: w.token("taker"), json: refused })
      expectError(rest, { status: 400, message: "invalid request" })
      const restReasons = (rest.body as { reason: Array<string> }).reason
      await withRpcSession(w, "taker", async (session) => {
        const reasons = expectRpcError(await session.call("v1/rfq/create", { id: requestId, ...refused }), {
          code: -32602,
          message: "invalid request",
          status: 400
        })
        expectAltRefused(w, reasons)
        expect(reasons).toEqual(restReasons)
        // The list, read over the same session, did not grow.
        const page = await session.result<{ totalResults: number }>("v1/rfq/list", {
          role: "taker",
          limit: 1
        })
        expect(page.totalResults).toBe(before)

        const created = await session.result<{ rfqId: number }>("v1/rfq/create", {
          id: requestId,
          ...splitBody(w, ACCEPTED_AMOUNT)
        })
        // The key names that RFQ on REST too.
        expect(await createRfq(w, "taker", splitBody(w, ACCEPTED_AMOUNT), requestId)).toBe(created.rfqId)
      })
      expect(await takerRfqCount(w)).toBe(before + 1)
    }
  )
])
