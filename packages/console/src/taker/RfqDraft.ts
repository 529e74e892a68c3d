import {
  CreateRfqLeg,
  classifyStrategy,
  decodeRequestEither,
  describeStructure,
  type EndpointInput,
  endpoints,
  parseInstrument,
  SettlementAccountsInput
} from "@rfq/engine/api"

/**
 * The taker's RFQ as typed in the form, and everything the form says about it as the user types:
 * the request it sends, the service's own validation of it (the engine's request schema, so the
 * messages are the ones a send would answer), the split rules per settlement option, and the
 * strategy and description of the legs (the engine's classifier). Pure: no I/O, no DOM.
 */

export type SettlementOption = "DBT" | "BULL"
export const SETTLEMENT_OPTIONS: ReadonlyArray<SettlementOption> = ["DBT", "BULL"]
export type Direction = "buy" | "sell"
export type BaseCurrency = EndpointInput<"v1/exchange/instruments">["baseCurrency"]
export const BASE_CURRENCIES: ReadonlyArray<BaseCurrency> = ["BTC", "ETH"]

export interface LegDraft {
  readonly key: number
  readonly direction: Direction
  readonly instrumentName: string
  readonly ratio: string
}

export interface HedgeDraft {
  readonly direction: Direction
  readonly instrumentName: string
  readonly amount: string
  readonly price: string
}

export interface AccountDraft {
  readonly key: number
  readonly credentialsId: string
  readonly percentage: string
}

export interface RfqDraft {
  readonly baseCurrency: BaseCurrency
  readonly amount: string
  /** The base currency or USDC; applies to DBT (BULL always quotes in USDC). */
  readonly quoteCurrency: string
  readonly anonymous: boolean
  readonly label: string
  readonly settlementOptions: ReadonlyArray<SettlementOption>
  readonly legs: ReadonlyArray<LegDraft>
  readonly hedge: HedgeDraft | undefined
  readonly accounts: Readonly<Partial<Record<SettlementOption, ReadonlyArray<AccountDraft>>>>
  readonly makers: Readonly<Partial<Record<SettlementOption, ReadonlyArray<string>>>>
}

let nextKey = 1
export const newKey = (): number => nextKey++

export const emptyDraft = (): RfqDraft => ({
  baseCurrency: "BTC",
  amount: "",
  quoteCurrency: "BTC",
  anonymous: false,
  label: "",
  settlementOptions: ["DBT"],
  legs: [{ key: newKey(), direction: "buy", instrumentName: "", ratio: "1" }],
  hedge: undefined,
  accounts: { DBT: [{ key: newKey(), credentialsId: "", percentage: "100" }] },
  makers: {}
})

/**
 * A typed number as JSON: the number when the text is one, else the text itself, so that the
 * schema answers `expected a number, got "abc"` rather than the form guessing.
 */
export const numeric = (text: string): number | string => {
  const trimmed = text.trim()
  if (trimmed !== "" && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(trimmed)) return Number(trimmed)
  return trimmed
}

type CreateInput = EndpointInput<"v1/rfq/create">

const accountsJson = (accounts: ReadonlyArray<AccountDraft>) =>
  accounts.map((a) => ({ credentialsId: numeric(a.credentialsId), percentage: numeric(a.percentage) }))

/** The request the form sends (`POST /v1/rfq/0`: no idempotency key, the button is the guard). */
/**
 * A fresh idempotency key for one send (contract: `{id}` is the caller's request id): a send
 * repeated after a lost answer creates one RFQ, not two. 0 would mean "no key".
 */
export const newRequestId = (): number => 1 + Math.floor(Math.random() * 2 ** 48)

export const requestOf = (draft: RfqDraft, requestId = 0): CreateInput => {
  const options = draft.settlementOptions
  const request: Record<string, unknown> = {
    id: requestId,
    baseCurrency: draft.baseCurrency,
    amount: numeric(draft.amount),
    anonymous: draft.anonymous,
    settlementOptions: options,
    settlementAccounts: Object.fromEntries(options.map((o) => [o, accountsJson(draft.accounts[o] ?? [])])),
    // An option with nobody invited is left out; the schema then names it.
    makers: Object.fromEntries(
      options.flatMap((o) => ((draft.makers[o]?.length ?? 0) > 0 ? [[o, draft.makers[o]]] : []))
    ),
    legs: draft.legs.map((l) => ({
      direction: l.direction,
      instrumentName: l.instrumentName.trim(),
      ratio: numeric(l.ratio)
    }))
  }
  if (options.includes("DBT")) request["quoteCurrency"] = draft.quoteCurrency
  if (draft.label.trim() !== "") request["label"] = draft.label.trim()
  if (draft.hedge !== undefined) {
    request["hedge"] = {
      direction: draft.hedge.direction,
      instrumentName: draft.hedge.instrumentName.trim(),
      amount: numeric(draft.hedge.amount),
      price: numeric(draft.hedge.price)
    }
  }
  return request as CreateInput
}

/** The service's reasons for refusing the request as it stands; empty when it would decode. */
export const requestIssues = (draft: RfqDraft): ReadonlyArray<string> => {
  const decoded = decodeRequestEither(endpoints["v1/rfq/create"].input, requestOf(draft))
  return decoded._tag === "Right" ? [] : (decoded.left.reason ?? [decoded.left.message])
}

/**
 * Split rules 1–3 for one option's accounts, as the service words them (the schema that runs
 * `settlementAccountsIssues`). Rules 4–5 need the venue and are answered by a send.
 */
export const splitIssues = (accounts: ReadonlyArray<AccountDraft>): ReadonlyArray<string> => {
  const decoded = decodeRequestEither(SettlementAccountsInput, accountsJson(accounts))
  return decoded._tag === "Right" ? [] : (decoded.left.reason ?? [decoded.left.message])
}

export interface Structure {
  readonly strategy: string
  readonly description: string
}

/** Strategy and description of the legs as typed, or the first leg problem in the way. */
export const structureOf = (draft: RfqDraft): Structure | { readonly problem: string } => {
  const legs = []
  for (const [index, leg] of draft.legs.entries()) {
    const decoded = decodeRequestEither(CreateRfqLeg, {
      direction: leg.direction,
      instrumentName: leg.instrumentName.trim(),
      ratio: numeric(leg.ratio)
    })
    if (decoded._tag === "Left") {
      return { problem: `leg ${index + 1}: ${(decoded.left.reason ?? [decoded.left.message]).join("; ")}` }
    }
    const instrument = parseInstrument(decoded.right.instrumentName)
    if (instrument._tag === "Left") {
      const reasons = instrument.left.reason ?? []
      return { problem: `leg ${index + 1}: ${[instrument.left.message, ...reasons].join(": ")}` }
    }
    legs.push({
      instrument: instrument.right,
      direction: decoded.right.direction,
      ratio: decoded.right.ratio
    })
  }
  if (legs.length === 0) return { problem: "add a leg" }
  const strategy = classifyStrategy(
    legs,
    draft.hedge === undefined ? undefined : { direction: draft.hedge.direction }
  )
  return { strategy, description: describeStructure(legs, strategy) }
}
