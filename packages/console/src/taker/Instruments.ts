import type { EndpointOutput } from "@rfq/engine/api"
import type { Connection } from "../api/Connection.js"
import { type Loaded, useLoad } from "../ui/hooks.js"
import type { BaseCurrency, SettlementOption } from "./RfqDraft.js"

export type Listing = EndpointOutput<"v1/exchange/instruments">[number]

/**
 * The instruments a leg may use with every chosen settlement option (a leg must exist on each
 * chosen venue): the venues' listings intersected by name, in the first venue's order.
 */
export const useInstruments = (
  connection: Connection,
  options: ReadonlyArray<SettlementOption>,
  baseCurrency: BaseCurrency
): Loaded<ReadonlyArray<Listing>> =>
  useLoad(
    async () => {
      if (options.length === 0) return []
      const listings = await Promise.all(
        options.map((exchange) => connection.call("v1/exchange/instruments", { exchange, baseCurrency }))
      )
      const [first, ...others] = listings
      const seen = new Set<string>()
      return (first ?? []).filter((listing) => {
        if (seen.has(listing.instrumentName)) return false
        seen.add(listing.instrumentName)
        return others.every((list) => list.some((l) => l.instrumentName === listing.instrumentName))
      })
    },
    `${options.join(",")}|${baseCurrency}`
  )

/** How a listing reads in a picker: `call 90000, 27DEC30, min 25`. */
export const listingLabel = (l: Listing): string =>
  [
    l.kind === "option" ? `${l.optionType} ${l.strike}` : l.kind.replace("_", " "),
    l.expiry,
    `min ${l.minBlockAmount}`
  ]
    .filter((part) => part !== undefined)
    .join(", ")
