import { Effect, Either, Option } from "effect"
import type { AccountStoreService, CredentialsRow } from "../accounts/AccountStore.js"
import type { BulkBlockTrade, BulkBlockTradeRequest } from "../api/AccountRequests.js"
import { parseVenueInstrumentName } from "../domain/VenueContract.js"
import { decNumber, decString } from "../rfq/Dec.js"
import type { Caller } from "../rfq/RfqRecord.js"
import type { BlockTradeLeg, VenuesService } from "../services/Venues.js"

/** One block trade's element of the answer: the venue's trades, or why it did not execute. */
export type BulkResult =
  | {
      readonly nonce: string
      readonly exchangeError: { readonly message: string; readonly reason?: ReadonlyArray<string> }
    }
  | {
      readonly nonce: string
      /** Our id of the block trade (an integer, numbered when its nonce was claimed). */
      readonly blockTradeId: number
      readonly exchangeResult: {
        readonly exchange: string
        /** The venue's own id of the block trade. */
        readonly exchangeBlockTradeId: string
        readonly trades: ReadonlyArray<{
          readonly exchangeTradeId: string
          readonly instrumentName: string
          readonly direction: "buy" | "sell"
          readonly price: number
          readonly amount: number
        }>
      }
    }

const refused = (nonce: string, message: string, reason?: string): BulkResult =>
  reason === undefined
    ? { nonce, exchangeError: { message } }
    : { nonce, exchangeError: { message, reason: [reason] } }

/**
 * `POST /block-trade/bulk`: each block trade executes on its own, in request order, and its
 * element of the answer says what happened. Credentials are named by alias: the caller desk's own,
 * or a counterparty desk's as `<counterpartyId>:<alias>` when that counterparty allows it. A nonce
 * is claimed (forever, per desk) before the venue is called, so a replay is refused, never
 * executed twice; the venue call is idempotent by `bulk-<desk>-<nonce>` as well. Claiming the nonce
 * numbers the block trade: `blockTradeId` is that integer, the venue's own id is in `exchangeResult`.
 */
export const bulkBlockTrades = (
  accounts: AccountStoreService,
  venues: VenuesService,
  caller: Caller,
  req: BulkBlockTradeRequest
) =>
  Effect.gen(function* () {
    const own = yield* accounts.credentialsOfDesk(caller.deskId)
    const partners = (yield* accounts.counterparties(caller.deskId)).filter((c) => c.allowsBlockTrade)
    const partnerCredentials = new Map<number, ReadonlyArray<CredentialsRow>>()
    for (const p of partners) partnerCredentials.set(p.id, yield* accounts.credentialsOfDesk(p.id))
    const byAlias = (name: string): CredentialsRow | undefined => {
      const qualified = /^(\d+):(.+)$/.exec(name)
      if (qualified === null) return own.find((c) => c.alias === name)
      return partnerCredentials.get(Number(qualified[1]))?.find((c) => c.alias === qualified[2])
    }

    const execute = (bt: BulkBlockTrade): Effect.Effect<BulkResult> =>
      Effect.gen(function* () {
        const maker = byAlias(bt.makerExchangeCredentials)
        const taker = byAlias(bt.takerExchangeCredentials)
        if (maker === undefined)
          return refused(
            bt.nonce,
            "credentials not found",
            `makerExchangeCredentials: ${bt.makerExchangeCredentials}`
          )
        if (taker === undefined)
          return refused(
            bt.nonce,
            "credentials not found",
            `takerExchangeCredentials: ${bt.takerExchangeCredentials}`
          )
        if (maker.exchange !== taker.exchange) {
          return refused(
            bt.nonce,
            "invalid request",
            `both credentials must be for the same exchange (${maker.exchange}, ${taker.exchange})`
          )
        }
        const venue = maker.exchange
        const legs: Array<BlockTradeLeg> = []
        for (const t of bt.trades) {
          const parsed = parseVenueInstrumentName(t.instrumentName)
          if (Either.isLeft(parsed)) return refused(bt.nonce, parsed.left.message, parsed.left.reason?.[0])
          const currency = parsed.right.contract === "linear" ? "USDC" : parsed.right.instrument.base
          const neutral = t.instrumentName.replace(/^([A-Z]+)_USDC-/, "$1-")
          const instrument = yield* venues.resolve(venue, neutral, currency)
          if (Option.isNone(instrument)) {
            return refused(
              bt.nonce,
              "instrument not found for leg",
              `${t.instrumentName} is not listed on ${venue}`
            )
          }
          legs.push({
            instrument: instrument.value,
            direction: t.direction,
            price: t.price,
            amount: t.amount
          })
        }
        for (const row of [maker, taker]) {
          const permissions = yield* venues.permissions(venue, {
            credentialsId: row.id,
            clientId: row.clientId
          })
          if (!permissions.blockTrade) {
            return refused(
              bt.nonce,
              "insufficient permissions",
              `${row.alias} may not block trade on ${venue}`
            )
          }
        }
        const claimed = yield* accounts.claimNonce(caller.deskId, bt.nonce)
        if (Option.isNone(claimed)) {
          return refused(bt.nonce, "invalid request", `nonce ${bt.nonce} was already used`)
        }
        const result = yield* venues
          .executeBlockTrade({
            venue,
            idempotencyKey: `bulk-${caller.deskId}-${bt.nonce}`,
            maker: { credentialsId: maker.id, clientId: maker.clientId },
            taker: { credentialsId: taker.id, clientId: taker.clientId },
            legs
          })
          .pipe(Effect.either)
        if (Either.isLeft(result))
          return refused(bt.nonce, "the venue refused the block trade", result.left.reason)
        return {
          nonce: bt.nonce,
          blockTradeId: claimed.value,
          exchangeResult: {
            exchange: venue,
            exchangeBlockTradeId: result.right.blockTradeId,
            trades: result.right.legs.map((l) => ({
              exchangeTradeId: l.tradeId,
              instrumentName: l.venueName,
              direction: l.direction,
              price: decNumber(
                decString(legs.find((x) => x.instrument.venueName === l.venueName)?.price ?? legs[0]!.price)
              ),
              amount: decNumber(l.amount)
            }))
          }
        }
      })

    const results: Array<BulkResult> = []
    for (const bt of req.blockTrades) results.push(yield* execute(bt))
    return results
  })
