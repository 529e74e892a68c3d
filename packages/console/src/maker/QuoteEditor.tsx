import { useState } from "preact/hooks"
import { numeric } from "../taker/RfqDraft.js"
import { ErrorBox } from "../ui/ErrorBox.js"
import { IssueList, ShortField, ShortInput } from "../ui/Fields.js"
import { num } from "../ui/format.js"
import { useAction, useConnection } from "../ui/hooks.js"
import {
  createRequest,
  draftFor,
  legPricesRequest,
  type MakerQuote,
  type MakerRfq,
  type QuoteDraft,
  quoteIssues,
  updateRequest
} from "./QuoteDraft.js"

interface Props {
  readonly rfq: MakerRfq
  /** The quote being edited; a new quote when undefined. */
  readonly quote: MakerQuote | undefined
  readonly onDone: () => void
}

/**
 * A quote on one RFQ: the leg-price helper turns a structure price into leg prices on the venue's
 * tick inside its band (`v1/rfq/leg-prices`); the maker may adjust them, then sends or updates.
 */
export const QuoteEditor = ({ rfq, quote, onDone }: Props) => {
  const connection = useConnection()
  const [draft, setDraft] = useState<QuoteDraft>(() => draftFor(rfq, quote))
  const [difference, setDifference] = useState<number | undefined>(undefined)
  const helper = useAction()
  const send = useAction()
  const change = (patch: Partial<QuoteDraft>) => setDraft((d) => ({ ...d, ...patch }))
  const issues = quoteIssues(rfq, draft, Date.now())
  // The service's reasons are shown once every price is typed: an empty form is not an error.
  const pricesTyped =
    rfq.legs.every((l) => (draft.legPrices[l.instrumentName] ?? "").trim() !== "") &&
    (rfq.hedge?.instrumentName === undefined || draft.hedgePrice.trim() !== "")
  const priceIsNumber = typeof numeric(draft.structurePrice) === "number"

  const priceLegs = () =>
    helper.run(async () => {
      const answer = await connection.call("v1/rfq/leg-prices", legPricesRequest(rfq, draft))
      setDifference(answer.priceDifference)
      change({ legPrices: Object.fromEntries(answer.legs.map((l) => [l.instrumentName, String(l.price)])) })
    })
  const submit = () =>
    send.run(async () => {
      if (quote === undefined) await connection.call("v1/quote/create", createRequest(rfq, draft, Date.now()))
      else await connection.call("v1/quote/update", updateRequest(rfq, draft, quote.rfqQuoteId, Date.now()))
      onDone()
    })

  return (
    <form
      class="quote-editor"
      onSubmit={(e) => {
        e.preventDefault()
        void submit()
      }}
    >
      <h4>{quote === undefined ? "New quote" : `Update quote #${quote.rfqQuoteId}`}</h4>
      <div class="row">
        <label>
          Side{" "}
          <select
            aria-label="quote side"
            value={draft.direction}
            disabled={quote !== undefined}
            onChange={(e) => change({ direction: e.currentTarget.value === "buy" ? "buy" : "sell" })}
          >
            <option value="sell">ask: I sell the structure</option>
            <option value="buy">bid: I buy the structure</option>
          </select>
        </label>
        <label>
          Settle on{" "}
          <select
            aria-label="quote settlement option"
            value={draft.settlementOption}
            onChange={(e) => change({ settlementOption: e.currentTarget.value })}
          >
            {rfq.settlementOptions.map((o) => (
              <option key={o} value={o}>
                {o} (prices in {rfq.quoteCurrencies[o] ?? "?"})
              </option>
            ))}
          </select>
        </label>
        <ShortField
          label="Amount"
          name="quote amount"
          value={draft.amount}
          onInput={(amount) => change({ amount })}
        />
        <ShortField
          label="Label"
          name="quote label"
          value={draft.label}
          onInput={(label) => change({ label })}
        />
        <ShortField
          label="Valid for"
          name="quote valid for seconds"
          placeholder="until RFQ ends"
          value={draft.validFor}
          onInput={(validFor) => change({ validFor })}
          suffix="s"
        />
      </div>
      <fieldset>
        <legend>Leg-price helper</legend>
        <div class="row">
          <ShortField
            label="Structure price"
            name="structure price"
            placeholder={`mark ${num(rfq.markPrice)}`}
            value={draft.structurePrice}
            onInput={(structurePrice) => change({ structurePrice })}
          />
          <button type="button" onClick={() => change({ structurePrice: String(rfq.markPrice) })}>
            Use mark
          </button>
          <button type="button" disabled={!priceIsNumber || helper.busy} onClick={() => void priceLegs()}>
            Price legs
          </button>
          {difference !== undefined && (
            <span class={difference === 0 ? "ok" : "hint"} data-testid="price-difference">
              {difference === 0
                ? "leg prices reproduce the structure price"
                : `nearest on the tick: off by ${num(difference)}`}
            </span>
          )}
        </div>
        <ErrorBox error={helper.error} />
      </fieldset>
      <table class="list">
        <thead>
          <tr>
            <th>leg</th>
            <th>ratio</th>
            <th>price</th>
          </tr>
        </thead>
        <tbody>
          {rfq.legs.map((l) => (
            <tr key={l.instrumentName}>
              <td>
                {l.direction} {l.instrumentName}
              </td>
              <td>{num(l.ratio)}</td>
              <td>
                <ShortInput
                  name={`price ${l.instrumentName}`}
                  value={draft.legPrices[l.instrumentName] ?? ""}
                  onInput={(price) =>
                    change({ legPrices: { ...draft.legPrices, [l.instrumentName]: price } })
                  }
                />
              </td>
            </tr>
          ))}
          {rfq.hedge?.instrumentName !== undefined && (
            <tr>
              <td>
                {rfq.hedge.direction} {rfq.hedge.instrumentName} (hedge, {num(rfq.hedge.amount)})
              </td>
              <td />
              <td>
                <ShortInput
                  name="hedge price"
                  value={draft.hedgePrice}
                  onInput={(hedgePrice) => change({ hedgePrice })}
                />
              </td>
            </tr>
          )}
        </tbody>
      </table>
      {!pricesTyped && <p class="hint">Enter a price per leg, or let the leg-price helper fill them in.</p>}
      {pricesTyped && issues.length > 0 && <IssueList name="quote problems" issues={issues} />}
      <ErrorBox error={send.error} />
      <div class="row">
        <button type="submit" class="primary" disabled={send.busy || issues.length > 0}>
          {quote === undefined ? "Send quote" : "Update quote"}
        </button>
        {quote !== undefined && (
          <button type="button" onClick={onDone}>
            Stop editing
          </button>
        )}
      </div>
    </form>
  )
}
