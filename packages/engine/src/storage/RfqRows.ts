import {
  type Direction,
  oppositeDirection,
  type QuoteCurrency,
  type SettlementOption,
  settlementOptions
} from "../domain/Primitives.js"
import type { RfqStateValue } from "../rfq/RfqMachine.js"
import type {
  AllocationRecord,
  HedgeRecord,
  LegContract,
  LegRecord,
  QuoteHedgeRecord,
  QuoteRecord,
  RfqRecord,
  SettlementAccount,
  TradeRecord
} from "../rfq/RfqRecord.js"
import {
  bool,
  type Doc,
  decimal,
  doc,
  int,
  list,
  listOrEmpty,
  literal,
  optDecimal,
  optInt,
  optStr,
  parseDoc,
  partialRecord,
  str,
  string
} from "./RowReader.js"

/**
 * How the RFQ store reads its rows: each SELECT yields one JSON document per row (`doc`), built in
 * SQL with camelCase keys, numerics cast to text (exact) and children aggregated in (an RFQ's legs,
 * a trade's allocations). One text value per row instead of twenty-odd columns is what makes
 * restoring 100k RFQs quick on PGlite, whose cost is per value transferred.
 *
 * Readers return records: decimals canonical, optional fields absent (never `undefined`) when
 * their column is null.
 */

/** `rfqs r` as a document: the record's columns, `status`, `closedAt`, last event `seq`, `legs`. */
export const rfqDocument = `json_build_object(
  'id', r.id, 'requestId', r.request_id, 'takerDeskId', r.taker_desk_id, 'takerUserId', r.taker_user_id,
  'label', r.label, 'kind', r.kind, 'strategy', r.strategy, 'description', r.description, 'status', r.status,
  'baseCurrency', r.base_currency, 'quoteCurrency', r.quote_currency, 'quoteCurrencies', r.quote_currencies,
  'amount', r.amount::text, 'anonymous', r.anonymous, 'settlementOptions', r.settlement_options,
  'settlementAccounts', r.settlement_accounts, 'split', r.split, 'makers', r.makers, 'hedge', r.hedge,
  'markPrice', r.mark_price::text, 'createdAt', r.created_at, 'expiresAt', r.expires_at, 'closedAt', r.closed_at,
  'seq', (SELECT max(e.seq) FROM rfq_events e WHERE e.rfq_id = r.id),
  'legs', (SELECT json_agg(json_build_object('instrumentName', l.instrument_name, 'direction', l.direction,
      'ratio', l.ratio::text, 'amount', l.amount::text, 'price', l.price::text, 'expiry', l.expiry,
      'contracts', l.contracts) ORDER BY l.position)
    FROM rfq_legs l WHERE l.rfq_id = r.id)
)::text AS doc`

/** `quotes q` as a document. */
export const quoteDocument = `json_build_object(
  'id', q.id, 'rfqId', q.rfq_id, 'makerId', q.maker_id, 'makerDeskId', q.maker_desk_id,
  'makerUserId', q.maker_user_id, 'label', q.label, 'direction', q.direction, 'settlementOption', q.settlement_option,
  'settlementCredentials', q.settlement_credentials_id, 'quoteCurrency', q.quote_currency, 'amount', q.amount::text,
  'price', q.price::text, 'legs', q.legs, 'hedge', q.hedge, 'status', q.status, 'validUntil', q.valid_until,
  'createdAt', q.created_at, 'updatedAt', q.updated_at
)::text AS doc`

/** `trades t JOIN quotes q ON q.id = t.quote_id` as a document, allocations in position order. */
export const tradeDocument = `json_build_object(
  'id', t.id, 'rfqId', t.rfq_id, 'quoteId', t.quote_id, 'makerId', q.maker_id, 'makerDeskId', q.maker_desk_id,
  'settlementOption', t.settlement_option, 'takerDirection', t.taker_direction, 'price', t.price::text,
  'amount', t.amount::text, 'filledAmount', t.filled_amount::text, 'createdAt', t.created_at,
  'allocations', (SELECT json_agg(json_build_object('id', a.id, 'credentialsId', a.credentials_id,
      'percentage', a.percentage::text, 'amount', a.amount::text, 'status', a.status,
      'idempotencyKey', a.idempotency_key, 'exchangeTradeId', a.exchange_trade_id, 'reason', a.reason,
      'updatedAt', a.updated_at) ORDER BY a.position)
    FROM allocations a WHERE a.trade_id = t.id)
)::text AS doc`

/**
 * `rfqs.status` as this store writes it: the machine's states, with 'trading' for the internal
 * 'settling'. (The table also allows 'draft', which the store never writes and its queries skip.)
 */
const rfqStatus = literal(["open", "trading", "filled", "filledPartial", "cancelled", "expired"] as const)
export type RfqDbStatus = ReturnType<typeof rfqStatus>

export const stateValueOf = (status: RfqDbStatus): RfqStateValue =>
  status === "trading" ? "settling" : status

/** The `rfqs.status` a machine state is stored as; `deleted` keeps the status it had. */
export const dbStatusOf = (value: RfqStateValue): RfqDbStatus | undefined =>
  value === "settling" ? "trading" : value === "deleted" ? undefined : value

const direction = literal<Direction>(["buy", "sell"])
const settlementOption = literal<SettlementOption>(settlementOptions)
const quoteCurrency = literal<QuoteCurrency>(["BTC", "ETH", "USDC"])
const baseCurrency = literal(["BTC", "ETH"] as const)
const quoteStatus = literal(["active", "filled", "cancelled", "expired"] as const)
const allocationStatus = literal(["pending", "filled", "failed"] as const)

const optional = <K extends string, A>(key: K, value: A | undefined): { [P in K]?: A } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: A }

const contractOf = (u: unknown, path: string): LegContract => {
  const d = doc(u, path)
  return {
    instrumentId: int(d, "instrumentId", path),
    venueName: str(d, "venueName", path),
    quoteCurrency: quoteCurrency(d, "quoteCurrency", path)
  }
}

const contractsOf = (u: unknown, path: string) => partialRecord(u, settlementOptions, path, contractOf)

const legOf = (u: unknown, path: string): LegRecord => {
  const d = doc(u, path)
  return {
    instrumentName: str(d, "instrumentName", path),
    direction: direction(d, "direction", path),
    ratio: decimal(d, "ratio", path),
    amount: decimal(d, "amount", path),
    ...optional("price", optDecimal(d, "price", path)),
    ...optional("expiry", optStr(d, "expiry", path)),
    contracts: contractsOf(d.contracts, `${path}.contracts`)
  }
}

const hedgeOf = (u: unknown, path: string): HedgeRecord => {
  const d = doc(u, path)
  return {
    instrumentName: str(d, "instrumentName", path),
    direction: direction(d, "direction", path),
    amount: decimal(d, "amount", path),
    price: decimal(d, "price", path),
    ...optional("expiry", optStr(d, "expiry", path)),
    contracts: contractsOf(d.contracts, `${path}.contracts`)
  }
}

const accountsOf = (u: unknown, path: string): ReadonlyArray<SettlementAccount> =>
  list(u, path).map((a, i) => {
    const d = doc(a, `${path}[${i}]`)
    return { credentialsId: int(d, "credentialsId", path), percentage: decimal(d, "percentage", path) }
  })

const stringsOf = (u: unknown, path: string): ReadonlyArray<string> =>
  list(u, path).map((s, i) => string(s, `${path}[${i}]`))

/** An RFQ document: the record, and what the store keeps beside it. */
export interface RfqRow {
  readonly rfq: RfqRecord
  readonly status: RfqDbStatus
  readonly closedAt: number | undefined
  readonly seq: number
}

export const readRfq = (text: unknown): RfqRow => {
  const d = parseDoc(text, "rfq")
  const path = `rfq ${String(d.id)}`
  const hedge = d.hedge === null ? undefined : hedgeOf(d.hedge, `${path}.hedge`)
  const rfq: RfqRecord = {
    id: int(d, "id", path),
    requestId: int(d, "requestId", path),
    takerDeskId: int(d, "takerDeskId", path),
    takerUserId: int(d, "takerUserId", path),
    ...optional("label", optStr(d, "label", path)),
    kind: str(d, "kind", path),
    strategy: str(d, "strategy", path),
    description: str(d, "description", path),
    baseCurrency: baseCurrency(d, "baseCurrency", path),
    quoteCurrency: quoteCurrency(d, "quoteCurrency", path),
    quoteCurrencies: partialRecord(
      d.quoteCurrencies,
      settlementOptions,
      `${path}.quoteCurrencies`,
      quoteCurrency.value
    ),
    amount: decimal(d, "amount", path),
    anonymous: bool(d, "anonymous", path),
    settlementOptions: list(d.settlementOptions, `${path}.settlementOptions`).map((u, i) =>
      settlementOption.value(u, `${path}.settlementOptions[${i}]`)
    ),
    settlementAccounts: partialRecord(
      d.settlementAccounts,
      settlementOptions,
      `${path}.settlementAccounts`,
      accountsOf
    ),
    split: bool(d, "split", path),
    makers: partialRecord(d.makers, settlementOptions, `${path}.makers`, stringsOf),
    legs: listOrEmpty(d.legs, `${path}.legs`).map((u, i) => legOf(u, `${path}.legs[${i}]`)),
    ...optional("hedge", hedge),
    markPrice: decimal(d, "markPrice", path),
    createdAt: int(d, "createdAt", path),
    expiresAt: int(d, "expiresAt", path)
  }
  return {
    rfq,
    status: rfqStatus(d, "status", path),
    closedAt: optInt(d, "closedAt", path),
    seq: optInt(d, "seq", path) ?? 0
  }
}

const quoteLegOf = (u: unknown, path: string): QuoteHedgeRecord => {
  const d = doc(u, path)
  return {
    instrumentName: str(d, "instrumentName", path),
    instrumentId: int(d, "instrumentId", path),
    direction: direction(d, "direction", path),
    price: decimal(d, "price", path),
    amount: decimal(d, "amount", path)
  }
}

export const readQuote = (text: unknown): QuoteRecord => {
  const d: Doc = parseDoc(text, "quote")
  const path = `quote ${String(d.id)}`
  const hedge = d.hedge === null ? undefined : quoteLegOf(d.hedge, `${path}.hedge`)
  return {
    id: int(d, "id", path),
    rfqId: int(d, "rfqId", path),
    makerId: str(d, "makerId", path),
    makerDeskId: int(d, "makerDeskId", path),
    makerUserId: int(d, "makerUserId", path),
    ...optional("label", optStr(d, "label", path)),
    direction: direction(d, "direction", path),
    settlementOption: settlementOption(d, "settlementOption", path),
    settlementCredentials: int(d, "settlementCredentials", path),
    quoteCurrency: quoteCurrency(d, "quoteCurrency", path),
    amount: decimal(d, "amount", path),
    price: decimal(d, "price", path),
    legs: list(d.legs, `${path}.legs`).map((u, i) => quoteLegOf(u, `${path}.legs[${i}]`)),
    ...optional("hedge", hedge),
    status: quoteStatus(d, "status", path),
    ...optional("validUntil", optInt(d, "validUntil", path)),
    createdAt: int(d, "createdAt", path),
    updatedAt: int(d, "updatedAt", path)
  }
}

const allocationOf = (u: unknown, path: string): AllocationRecord => {
  const d = doc(u, path)
  return {
    id: int(d, "id", path),
    credentialsId: int(d, "credentialsId", path),
    percentage: decimal(d, "percentage", path),
    amount: decimal(d, "amount", path),
    status: allocationStatus(d, "status", path),
    idempotencyKey: str(d, "idempotencyKey", path),
    ...optional("exchangeTradeId", optStr(d, "exchangeTradeId", path)),
    ...optional("reason", optStr(d, "reason", path)),
    updatedAt: int(d, "updatedAt", path)
  }
}

export const readTrade = (text: unknown): TradeRecord => {
  const d = parseDoc(text, "trade")
  const path = `trade ${String(d.id)}`
  return {
    id: int(d, "id", path),
    rfqId: int(d, "rfqId", path),
    quoteId: int(d, "quoteId", path),
    makerId: str(d, "makerId", path),
    makerDeskId: int(d, "makerDeskId", path),
    settlementOption: settlementOption(d, "settlementOption", path),
    makerDirection: oppositeDirection(direction(d, "takerDirection", path)),
    price: decimal(d, "price", path),
    amount: decimal(d, "amount", path),
    filledAmount: decimal(d, "filledAmount", path),
    createdAt: int(d, "createdAt", path),
    allocations: listOrEmpty(d.allocations, `${path}.allocations`).map((u, i) =>
      allocationOf(u, `${path}.allocations[${i}]`)
    )
  }
}
