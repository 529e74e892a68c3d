import { type EndpointInput, RfqClient } from "@rfq/client"
import { demoRfq, type PricedLeg } from "./Api.js"

/**
 * The bench's set-up and checking paths through the typed client (`@rfq/client`): logins, the
 * RFQs and quotes a scenario measures against, leg prices. Measured loops whose baseline is a bare
 * socket or bare HTTP stay on `Api` / `RpcConnection` (bench/README.md, "Which paths use
 * @rfq/client"), so the client's own cost is never billed to the service.
 */

/** A demo desk's client: it logs in with the client-credentials grant and renews its token itself. */
export const demoClient = (baseUrl: string, clientId: string): RfqClient =>
  new RfqClient({ baseUrl, clientId, clientSecret: `${clientId}-secret` })

/** The brief's RFQ (`demoRfq`), created by `taker`; its id. */
export const createDemoRfq = async (taker: RfqClient): Promise<number> =>
  (await taker.call("v1/rfq/create", { id: 0, ...demoRfq } as EndpointInput<"v1/rfq/create">)).rfqId

/** Leg prices inside the venue's band: the leg-price helper's answer for the RFQ's mark (plus `offsetTicks` ticks). */
export const priceLegs = async (
  maker: RfqClient,
  rfqId: number,
  offsetTicks = 0
): Promise<ReadonlyArray<PricedLeg>> => {
  const rfq = await maker.call("v1/rfq/get", { id: rfqId })
  const priced = await maker.call("v1/rfq/leg-prices", {
    rfqId,
    price: (Math.round(rfq.markPrice * 10_000) + offsetTicks) / 10_000,
    legs: rfq.legs.map(({ instrumentName, direction, ratio }) => ({ instrumentName, direction, ratio }))
  })
  return priced.legs.map(({ instrumentName, price }) => ({ instrumentName, price }))
}
