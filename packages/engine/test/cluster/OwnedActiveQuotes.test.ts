import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { makeOwnedActiveQuotes } from "../../src/cluster/OwnedActiveQuotes.js"
import { Ownership } from "../../src/engine/Ownership.js"
import { RfqStore } from "../../src/rfq/RfqStore.js"
import { SqlRfqStoreLive } from "../../src/storage/SqlRfqStore.js"
import {
  looseMarket,
  makerCaller,
  quoteRecord,
  Reference,
  referenceLayer,
  rfqRecord
} from "../support/records.js"
import { send, start } from "../support/rfqDriver.js"
import { testDatabases, testDatabaseTimeout } from "../support/TestDatabases.js"

/**
 * The active-quote index of one host among several (`OwnedActiveQuotes.ts`): a quote its own
 * actors indexed is found without SQL only while the host owns the quote's RFQ and until the RFQ is
 * released; anything else is what SQL holds.
 */

/** Ownership a test switches: the RFQs in `owned`. */
const owned = new Set<number>()
const switchableOwnership = Layer.succeed(Ownership, { owns: (rfqId) => owned.has(rfqId), shared: true })

describe.each(testDatabases)("owned active-quote index on $name", (db) => {
  layer(
    Layer.mergeAll(SqlRfqStoreLive, referenceLayer, switchableOwnership).pipe(Layer.provideMerge(db.layer)),
    {
      timeout: testDatabaseTimeout
    }
  )((it) => {
    it.effect("an owned RFQ's indexed quote is found from memory; not owned or released, SQL answers", () =>
      Effect.gen(function* () {
        const store = yield* RfqStore
        const ref = yield* Reference
        const index = yield* makeOwnedActiveQuotes
        const rfq = rfqRecord(ref, yield* store.nextRfqId)
        // A quote this host's actor holds that SQL does not (its step not written here): only the
        // memory can answer it, so a found quote proves where the answer came from.
        const onlyHere = quoteRecord(rfq, ref.makers[0], yield* store.nextQuoteId)
        owned.add(rfq.id)
        yield* index.reindex(rfq.id, { [onlyHere.id]: onlyHere })
        const found = yield* index.find(onlyHere.id)
        assert.deepStrictEqual(
          Option.map(found, (q) => [q.rfqId, q.deskId, q.userId]),
          Option.some([rfq.id, onlyHere.makerDeskId, onlyHere.makerUserId])
        )
        // The shard moved: the other host's actors are the truth now, and SQL has no such quote.
        owned.delete(rfq.id)
        assert.isTrue(Option.isNone(yield* index.find(onlyHere.id)))
        owned.add(rfq.id)
        assert.isTrue(Option.isSome(yield* index.find(onlyHere.id)))
        // Released (the shard watch saw it go): forgotten, even if this host owns the RFQ again.
        yield* index.release((id) => id === rfq.id)
        assert.isTrue(Option.isNone(yield* index.find(onlyHere.id)))

        // Indexed while another host owns the RFQ (a command that raced a shard move): not kept,
        // so it is not found once the shard comes back.
        const raced = quoteRecord(rfq, ref.makers[2], yield* store.nextQuoteId)
        owned.delete(rfq.id)
        yield* index.reindex(rfq.id, { [raced.id]: raced })
        owned.add(rfq.id)
        assert.isTrue(Option.isNone(yield* index.find(raced.id)))

        // A quote written through the store, never indexed here: SQL answers, owned or not.
        const other = rfqRecord(ref, yield* store.nextRfqId)
        const driven = yield* start(other)
        const stored = quoteRecord(other, ref.makers[1], yield* store.nextQuoteId)
        yield* send(driven, {
          type: "QUOTE.PUT",
          candidate: {
            quote: stored,
            caller: makerCaller(ref.makers[1]),
            legMarkets: other.legs.map(() => looseMarket),
            now: 1_700_000_001_000
          }
        })
        for (const own of [false, true]) {
          if (own) owned.add(other.id)
          else owned.delete(other.id)
          assert.deepStrictEqual(
            Option.map(yield* index.find(stored.id), (q) => q.rfqId),
            Option.some(other.id)
          )
        }
        // Indexed here as closed (the actor no longer holds it): memory has nothing, SQL still
        // says active, and SQL is what is answered (the command's actor then decides).
        yield* index.reindex(other.id, {})
        assert.isTrue(Option.isSome(yield* index.find(stored.id)))
      })
    )
  })
})
