import { Context, Effect, Layer, Option } from "effect"
import type { QuoteRecord } from "../rfq/RfqRecord.js"

/** Where an active quote lives and whose it is. */
export interface ActiveQuote {
  readonly id: number
  readonly rfqId: number
  readonly deskId: number
  readonly userId: number
  readonly label?: string | undefined
}

/**
 * The index of active quotes across RFQs: quote commands find a quote's RFQ by its id or by the
 * desk's label, cancel-all finds a desk's quotes, and a label is unique per maker desk among active
 * quotes. The RFQ actors are the truth; the index follows them (`reindex` after every step).
 *
 * Two implementations: `ActiveQuotesInMemory` (one host: the default, every answer synchronous, and
 * `reserveLabel` one atomic check-and-take, so two RFQs' mailboxes quoting with one label at the same
 * time cannot both get it) and `ActiveQuotesSql` (`storage/SqlActiveQuotes.ts`, several hosts: read
 * from the `quotes` table, where the unique index on desk and label decides between two hosts and
 * a step it refuses fails with `LabelTaken`, which quote commands answer as a taken label).
 */
export interface ActiveQuotesService {
  /** The active quote with this id. */
  readonly find: (quoteId: number) => Effect.Effect<Option.Option<ActiveQuote>>
  /** The quote that holds `label` on the desk: an active quote, or one reserving it. */
  readonly labelHolder: (deskId: number, label: string) => Effect.Effect<Option.Option<number>>
  /** Takes `label` on the desk for `quoteId` unless another quote holds it; whether it did. */
  readonly reserveLabel: (deskId: number, label: string, quoteId: number) => Effect.Effect<boolean>
  /** Frees a label reserved for a quote that did not become active (its step failed or was refused). */
  readonly releaseLabel: (deskId: number, label: string, quoteId: number) => Effect.Effect<void>
  /** The desk's active quotes, optionally only one user's (cancel-on-disconnect) or one RFQ's. */
  readonly ofDesk: (
    deskId: number,
    filter?: { readonly userId?: number | undefined; readonly rfqId?: number | undefined }
  ) => Effect.Effect<ReadonlyArray<ActiveQuote>>
  /**
   * Makes the index agree with an RFQ actor's active quotes: quotes it no longer holds leave (and
   * free their labels), the others are (re-)entered. An expiry that the mailbox ran before a command
   * closes quotes the command never saw; they leave here too.
   */
  readonly reindex: (rfqId: number, quotes: Readonly<Record<number, QuoteRecord>>) => Effect.Effect<void>
  /**
   * Forgets the quotes of the RFQs `which` accepts: their ownership moved to another engine, whose
   * actors now change them (nothing to do where the index is shared storage).
   */
  readonly release: (which: (rfqId: number) => boolean) => Effect.Effect<void>
}

export class ActiveQuotes extends Context.Tag("rfq/ActiveQuotes")<ActiveQuotes, ActiveQuotesService>() {}

/** The index in this process's memory: every operation is synchronous, so each one is atomic. */
export const makeInMemoryActiveQuotes = (): ActiveQuotesService => {
  const active = new Map<number, ActiveQuote>()
  const labels = new Map<string, number>()
  // The indexed quote ids of each RFQ, so a re-index finds the quotes its actor no longer holds.
  const byRfq = new Map<number, Set<number>>()
  const labelKey = (deskId: number, label: string) => `${deskId}\u0000${label}`

  const enter = (q: QuoteRecord) => {
    const previous = active.get(q.id)
    if (previous?.label !== undefined) labels.delete(labelKey(previous.deskId, previous.label))
    active.set(q.id, {
      id: q.id,
      rfqId: q.rfqId,
      deskId: q.makerDeskId,
      userId: q.makerUserId,
      label: q.label
    })
    if (q.label !== undefined) labels.set(labelKey(q.makerDeskId, q.label), q.id)
    const ids = byRfq.get(q.rfqId)
    if (ids === undefined) byRfq.set(q.rfqId, new Set([q.id]))
    else ids.add(q.id)
  }
  const leave = (id: number) => {
    const previous = active.get(id)
    if (previous === undefined) return
    if (previous.label !== undefined && labels.get(labelKey(previous.deskId, previous.label)) === id) {
      labels.delete(labelKey(previous.deskId, previous.label))
    }
    active.delete(id)
    const ids = byRfq.get(previous.rfqId)
    ids?.delete(id)
    if (ids?.size === 0) byRfq.delete(previous.rfqId)
  }

  return {
    find: (quoteId) => Effect.sync(() => Option.fromNullable(active.get(quoteId))),
    labelHolder: (deskId, label) =>
      Effect.sync(() => Option.fromNullable(labels.get(labelKey(deskId, label)))),
    reserveLabel: (deskId, label, quoteId) =>
      Effect.sync(() => {
        const key = labelKey(deskId, label)
        const holder = labels.get(key)
        if (holder !== undefined && holder !== quoteId) return false
        labels.set(key, quoteId)
        return true
      }),
    releaseLabel: (deskId, label, quoteId) =>
      Effect.sync(() => {
        const key = labelKey(deskId, label)
        if (labels.get(key) === quoteId && !active.has(quoteId)) labels.delete(key)
      }),
    ofDesk: (deskId, filter) =>
      Effect.sync(() => {
        const out: Array<ActiveQuote> = []
        for (const entry of active.values()) {
          if (entry.deskId !== deskId) continue
          if (filter?.userId !== undefined && entry.userId !== filter.userId) continue
          if (filter?.rfqId !== undefined && entry.rfqId !== filter.rfqId) continue
          out.push(entry)
        }
        return out
      }),
    reindex: (rfqId, quotes) =>
      Effect.sync(() => {
        const ids = byRfq.get(rfqId)
        if (ids !== undefined) for (const id of [...ids]) if (quotes[id] === undefined) leave(id)
        for (const q of Object.values(quotes)) enter(q)
      }),
    release: (which) =>
      Effect.sync(() => {
        for (const [rfqId, ids] of [...byRfq]) if (which(rfqId)) for (const id of [...ids]) leave(id)
      })
  }
}

/** The in-memory index: one host, the default. */
export const ActiveQuotesInMemory: Layer.Layer<ActiveQuotes> = Layer.sync(
  ActiveQuotes,
  makeInMemoryActiveQuotes
)
