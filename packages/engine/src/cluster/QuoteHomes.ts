/**
 * Which RFQ each quote belongs to, as far as this host has learnt it: a quote never moves to
 * another RFQ and its id is never given to another quote, so an entry, once known, stays true on
 * every host for ever. Only what is known is kept (an id not found may be a quote another host is
 * making now); the oldest entries go first past `capacity` (a map keeps insertion order), so a
 * long-running host holds at most `capacity` entries (about 100 bytes each).
 *
 * Several hosts route a quote command (update, delete, accept) to the owner of the quote's RFQ;
 * this memo spares that routing a database read for every quote the host has made or looked up.
 */
export interface QuoteHomes {
  readonly rfqOf: (quoteId: number) => number | undefined
  readonly remember: (quoteId: number, rfqId: number) => void
}

export const DEFAULT_QUOTE_HOMES = 100_000

export const makeQuoteHomes = (capacity = DEFAULT_QUOTE_HOMES): QuoteHomes => {
  const homes = new Map<number, number>()
  return {
    rfqOf: (quoteId) => homes.get(quoteId),
    remember: (quoteId, rfqId) => {
      if (homes.has(quoteId)) return
      if (homes.size >= capacity) homes.delete(homes.keys().next().value!)
      homes.set(quoteId, rfqId)
    }
  }
}
