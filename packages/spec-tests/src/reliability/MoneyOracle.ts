/**
 * The contract's money arithmetic written out independently of the engine, for the money-rules
 * item: the split of a traded amount over accounts, each account's legs and hedge, whether the
 * venue's minimums hold, and the side each leg must be booked with on the venue ledger. Amounts of
 * BTC options are kept in tenths (the 0.1 step), hedges (USD) in whole units (step 10).
 */

export const OPTION_MIN_TENTHS = 250n
export const HEDGE_MIN = 200_000n
export const HEDGE_STEP = 10n

export type Side = "buy" | "sell"

/** What the taker asks for: percentages (integers totalling 100), the legs' ratios, the hedge. */
export interface MoneyCase {
  readonly percentages: ReadonlyArray<number>
  readonly rfqTenths: number
  /** Integer ratios, one per leg, in the RFQ's order. */
  readonly ratios: ReadonlyArray<number>
  /** The hedge amount for the whole RFQ (USD), if any. */
  readonly hedge?: number | undefined
}

export interface AccountAmounts {
  readonly shareTenths: bigint
  readonly legTenths: ReadonlyArray<bigint>
  readonly hedge?: bigint | undefined
}

/**
 * Each account's share: ⌊traded × pct / 100⌋ on the step, the remainder to the largest percentage
 * (first on a tie); legs = share × ratio; hedge = ⌊H × share / A⌋ on its step of 10.
 */
export const allocate = (c: MoneyCase, tradedTenths: number): ReadonlyArray<AccountAmounts> => {
  const traded = BigInt(tradedTenths)
  const floors = c.percentages.map((p) => (traded * BigInt(p)) / 100n)
  const largest = c.percentages.indexOf(Math.max(...c.percentages))
  const remainder = traded - floors.reduce((a, b) => a + b, 0n)
  return floors.map((f, i) => {
    const share = i === largest ? f + remainder : f
    return {
      shareTenths: share,
      legTenths: c.ratios.map((r) => share * BigInt(r)),
      hedge:
        c.hedge === undefined
          ? undefined
          : ((BigInt(c.hedge) * share) / (BigInt(c.rfqTenths) * HEDGE_STEP)) * HEDGE_STEP
    }
  })
}

export const legsMeetMinimum = (accounts: ReadonlyArray<AccountAmounts>): boolean =>
  accounts.every((a) => a.legTenths.every((l) => l >= OPTION_MIN_TENTHS))

export const hedgesMeetMinimum = (accounts: ReadonlyArray<AccountAmounts>): boolean =>
  accounts.every((a) => a.hedge === undefined || a.hedge >= HEDGE_MIN)

/** The maker's side of a leg listed `listed` when its quote is `quoted`: a bid buys as listed. */
export const makerSide = (quoted: Side, listed: Side): Side =>
  quoted === "buy" ? listed : listed === "buy" ? "sell" : "buy"

/** One block trade as the ledger must hold it. */
export interface ExpectedBooking {
  readonly makerClientId: string
  readonly takerClientId: string
  /** `side amount` per leg, hedge last, amounts as the venue writes them. */
  readonly legs: ReadonlyArray<string>
}

export const tenthsText = (t: bigint): string => {
  const whole = t / 10n
  const frac = t % 10n
  return frac === 0n ? String(whole) : `${whole}.${frac}`
}

/** A booked block trade (`venue_block_trades.payload`). */
export interface Booked {
  readonly idempotencyKey: string
  readonly makerClientId: string
  readonly takerClientId: string
  readonly legs: ReadonlyArray<{ readonly direction: string; readonly amount: string }>
}

/**
 * Compares the ledger with the bookings the run expects, by idempotency key (`exact`) or, for bulk
 * block trades whose key holds the caller's desk id, by the nonce at its end. Returns one problem
 * per booking that breaks the convention, is unknown, or is missing.
 */
export const ledgerProblems = (
  booked: ReadonlyArray<Booked>,
  exact: ReadonlyMap<string, ExpectedBooking>,
  byNonce: ReadonlyMap<string, ExpectedBooking>
): Array<string> => {
  const problems: Array<string> = []
  const seen = new Set<string>()
  for (const b of booked) {
    const nonce = /^bulk-\d+-(.+)$/.exec(b.idempotencyKey)?.[1]
    const key = nonce === undefined ? b.idempotencyKey : `nonce:${nonce}`
    const expected = nonce === undefined ? exact.get(b.idempotencyKey) : byNonce.get(nonce)
    if (expected === undefined) {
      problems.push(`unexpected booking ${b.idempotencyKey}`)
      continue
    }
    seen.add(key)
    const legs = b.legs.map((l) => `${l.direction} ${l.amount}`)
    const got = JSON.stringify([b.makerClientId, b.takerClientId, legs])
    const want = JSON.stringify([expected.makerClientId, expected.takerClientId, expected.legs])
    if (got !== want) problems.push(`${b.idempotencyKey}: booked ${got}, expected ${want}`)
  }
  for (const k of exact.keys()) if (!seen.has(k)) problems.push(`missing booking ${k}`)
  for (const n of byNonce.keys()) if (!seen.has(`nonce:${n}`)) problems.push(`missing bulk booking ${n}`)
  return problems
}
