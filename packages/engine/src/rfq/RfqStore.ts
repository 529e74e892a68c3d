import { Context, Data, type Effect, type Option } from "effect"
import type { RfqEffect, RfqStateValue } from "./RfqMachine.js"
import type { QuoteRecord, RfqRecord, RfqState, TradeRecord } from "./RfqRecord.js"

/** A stored RFQ as an actor is restored from it. */
export interface StoredRfq {
  readonly value: RfqStateValue
  readonly state: RfqState
  /** The last event-log sequence number of the RFQ. */
  readonly seq: number
}

/** A position in a list (RFQs, quotes, the public tape): its keyset is `(createdAt, id)`, newest first. */
export interface ListPosition {
  readonly createdAt: number
  readonly id: number
}

export interface RfqListFilter {
  readonly deskId: number
  readonly makerId?: string | undefined
  readonly role?: "taker" | "maker" | undefined
  readonly statuses?: ReadonlyArray<string> | undefined
  readonly baseCurrency?: string | undefined
  readonly startTime?: number | undefined
  readonly endTime?: number | undefined
  /** Keyset position: RFQs strictly older than it. */
  readonly after?: ListPosition | undefined
  readonly limit: number
}

export interface QuoteListFilter {
  readonly makerDeskId: number
  readonly rfqId?: number | undefined
  readonly startTime?: number | undefined
  readonly endTime?: number | undefined
  /** Keyset position: quotes strictly older than it. */
  readonly after?: ListPosition | undefined
  readonly limit: number
}

export interface TapeFilter {
  readonly baseCurrency?: string | undefined
  readonly startTime?: number | undefined
  readonly endTime?: number | undefined
  /** Keyset position: trades strictly older than it. */
  readonly after?: ListPosition | undefined
  readonly limit: number
}

/** A trade that printed on the public tape, with its RFQ and the accepted quote (its leg prices). */
export interface PrintedTrade {
  readonly rfq: RfqRecord
  readonly trade: TradeRecord
  readonly quote: QuoteRecord
}

/**
 * A step refused by storage, nothing of it written, because its quote takes a label another active
 * quote of the desk holds: one on another RFQ, quoted at the same moment (on another host), past the
 * label check of `ActiveQuotes`. A definite outcome: the step did not and will not commit.
 */
export class LabelTaken extends Data.TaggedError("LabelTaken")<{ readonly rfqId: number }> {}

/**
 * An RFQ insert refused by storage, nothing of it written, because the user's request id is taken:
 * another create of the same request (on another host) committed first. A definite outcome.
 */
export class RequestIdTaken extends Data.TaggedError("RequestIdTaken")<{
  readonly userId: number
  readonly requestId: number
}> {}

/**
 * The RFQ actors' persistence port. Every method that writes runs in one transaction, so a command
 * is either wholly committed (state, quotes, trade, allocations and its event-log row) or not at all.
 */
export interface RfqStoreService {
  /** Next ids, unique across every engine on the database (a round trip once per block of ids). */
  readonly nextRfqId: Effect.Effect<number>
  readonly nextQuoteId: Effect.Effect<number>
  readonly nextTradeId: Effect.Effect<number>
  readonly nextAllocationId: Effect.Effect<number>
  /** The RFQ created earlier by this user under `requestId`, with the hash of its request body. */
  readonly findByRequestId: (
    userId: number,
    requestId: number
  ) => Effect.Effect<Option.Option<{ readonly rfqId: number; readonly bodyHash: string }>>
  /**
   * Inserts a new open RFQ with its event-log row (seq 1); `RequestIdTaken` when another RFQ of the
   * user holds its request id.
   */
  readonly insertRfq: (rfq: RfqRecord, bodyHash: string) => Effect.Effect<void, RequestIdTaken>
  /**
   * Persists the effects of one machine step as event-log row `seq`, atomically, only if the RFQ
   * is still at `seq - 1` (a stale owner never writes: the step dies, see `RfqStepWriter`).
   * `LabelTaken` when a quote it stores takes a label another active quote of the desk holds.
   */
  readonly applyStep: (
    rfqId: number,
    seq: number,
    eventType: string,
    value: RfqStateValue,
    effects: ReadonlyArray<RfqEffect>
  ) => Effect.Effect<void, LabelTaken>
  /** RFQs an actor must be running for: open ones, and ones caught mid-settlement. */
  readonly loadLive: Effect.Effect<ReadonlyArray<StoredRfq>>
  /** The ids of the RFQs closed at or after `at` (unix ms), unless deleted, in id order. */
  readonly closedSince: (at: number) => Effect.Effect<ReadonlyArray<number>>
  /**
   * The RFQs deleted at or after `at` (unix ms), in id order, each as its delete step left it
   * (state value `deleted`): for a take-over to publish that step again.
   */
  readonly deletedSince: (at: number) => Effect.Effect<ReadonlyArray<StoredRfq>>
  /** Any RFQ by id (closed ones with their trade), unless deleted. */
  readonly load: (rfqId: number) => Effect.Effect<Option.Option<StoredRfq>>
  /**
   * The RFQ's last event-log row: its sequence number and the step's payload as written
   * (`storage/RfqStepWriter.ts#stepPayload`), for a take-over to publish that step again.
   */
  readonly lastEvent: (
    rfqId: number
  ) => Effect.Effect<Option.Option<{ readonly seq: number; readonly payload: unknown }>>
  readonly list: (
    filter: RfqListFilter
  ) => Effect.Effect<{ readonly total: number; readonly ids: ReadonlyArray<number> }>
  readonly listQuotes: (
    filter: QuoteListFilter
  ) => Effect.Effect<{ readonly total: number; readonly quotes: ReadonlyArray<QuoteRecord> }>
  /** Every quote of an RFQ, active or closed (the taker's and a maker's view of a closed RFQ). */
  readonly quotesOf: (rfqId: number) => Effect.Effect<ReadonlyArray<QuoteRecord>>
  /** One quote by id, any status. */
  readonly quote: (quoteId: number) => Effect.Effect<Option.Option<QuoteRecord>>
  /** The RFQ a quote belongs to, any status (a quote never moves: callers may remember it). */
  readonly rfqOfQuote: (quoteId: number) => Effect.Effect<Option.Option<number>>
  readonly trades: (rfqId: number) => Effect.Effect<Option.Option<TradeRecord>>
  /** A page of the public tape (issue 16): printed trades, newest first, and how many match. */
  readonly publicTrades: (
    filter: TapeFilter
  ) => Effect.Effect<{ readonly total: number; readonly trades: ReadonlyArray<PrintedTrade> }>
  /** Where a printed trade sits on the tape; none for any other id (a cursor must be a print). */
  readonly publicTradeAt: (tradeId: number) => Effect.Effect<Option.Option<ListPosition>>
}

export class RfqStore extends Context.Tag("rfq/RfqStore")<RfqStore, RfqStoreService>() {}
