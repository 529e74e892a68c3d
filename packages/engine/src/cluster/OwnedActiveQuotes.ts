import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option } from "effect"
import { ActiveQuotes, type ActiveQuotesService, makeInMemoryActiveQuotes } from "../engine/ActiveQuotes.js"
import { Ownership } from "../engine/Ownership.js"
import { makeSqlActiveQuotes } from "../storage/SqlActiveQuotes.js"

/**
 * The active-quote index of one host among several: the shared index in SQL
 * (`storage/SqlActiveQuotes.ts`), with `find` answered first from the quotes of the RFQs whose
 * actors live here. Those actors are the truth for their RFQs (every step of an owned RFQ runs in
 * its actor here and re-indexes it after its commit), and the command that asked goes on to that
 * same actor, so the owner's quote updates and accepts need no read to find their quote.
 *
 * A quote found here counts only while this host owns its RFQ (a shard that moved answers from
 * SQL at once); only an owned RFQ's quotes are kept, and those of RFQs whose shard this host
 * released are forgotten (`Recovery.release`). A quote not found here is looked up in SQL: it may
 * be one another host's actor holds, or one whose RFQ was never loaded here. Labels and a desk's
 * quotes always come from SQL, where the unique label index decides between hosts.
 */
export const makeOwnedActiveQuotes: Effect.Effect<
  ActiveQuotesService,
  never,
  SqlClient.SqlClient | Ownership
> = Effect.gen(function* () {
  const shared = yield* makeSqlActiveQuotes
  const ownership = yield* Ownership
  const here = makeInMemoryActiveQuotes()
  return {
    ...shared,
    find: (quoteId) =>
      Effect.flatMap(here.find(quoteId), (found) =>
        Option.isSome(found) && ownership.owns(found.value.rfqId)
          ? Effect.succeed(found)
          : shared.find(quoteId)
      ),
    // Only an owned RFQ's actor is the truth: a step run here on an RFQ another host owns (a
    // command that raced a shard move) leaves no quote here to be found later, were the shard to
    // come back before its adoption re-indexes it.
    reindex: (rfqId, quotes) => here.reindex(rfqId, ownership.owns(rfqId) ? quotes : {}),
    release: here.release
  }
})

/** `ActiveQuotes` for several hosts on one database: see `makeOwnedActiveQuotes`. */
export const ActiveQuotesOwned: Layer.Layer<ActiveQuotes, never, SqlClient.SqlClient | Ownership> =
  Layer.effect(ActiveQuotes, makeOwnedActiveQuotes)
