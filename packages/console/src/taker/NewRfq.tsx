import { useState } from "preact/hooks"
import { ErrorBox } from "../ui/ErrorBox.js"
import { IssueList, ShortField } from "../ui/Fields.js"
import { useAction, useConnection, useLoad } from "../ui/hooks.js"
import { useInstruments } from "./Instruments.js"
import { HedgeEditor, LegsEditor } from "./LegsEditor.js"
import {
  BASE_CURRENCIES,
  emptyDraft,
  newKey,
  newRequestId,
  type RfqDraft,
  requestIssues,
  requestOf,
  SETTLEMENT_OPTIONS,
  type SettlementOption,
  structureOf
} from "./RfqDraft.js"
import { SettlementEditor } from "./SettlementEditor.js"

/** The taker's form: structure, settlement, makers; checked as typed; sent with one button. */
export const NewRfq = ({ onSent }: { readonly onSent: (rfqId: number) => void }) => {
  const connection = useConnection()
  const [draft, setDraft] = useState<RfqDraft>(emptyDraft)
  // One key per draft as sent: Send again after a lost answer is the same RFQ; an edit is a new one.
  const [requestId, setRequestId] = useState(newRequestId)
  const change = (patch: Partial<RfqDraft>) => {
    setDraft((d) => ({ ...d, ...patch }))
    setRequestId(newRequestId())
  }
  const instruments = useInstruments(connection, draft.settlementOptions, draft.baseCurrency)
  const credentials = useLoad(() => connection.call("v1/account/exchange-credentials", {}), "credentials")
  const makers = useLoad(() => connection.call("v1/exchange/maker", {}), "makers")
  const send = useAction()

  const structure = structureOf(draft)
  const issues = requestIssues(draft)
  const setOption = (option: SettlementOption, on: boolean) => {
    const settlementOptions = SETTLEMENT_OPTIONS.filter((o) =>
      o === option ? on : draft.settlementOptions.includes(o)
    )
    const accounts =
      on && draft.accounts[option] === undefined
        ? { ...draft.accounts, [option]: [{ key: newKey(), credentialsId: "", percentage: "100" }] }
        : draft.accounts
    change({ settlementOptions, accounts })
  }
  const submit = () =>
    send.run(async () => {
      const { rfqId } = await connection.call("v1/rfq/create", requestOf(draft, requestId))
      setRequestId(newRequestId())
      onSent(rfqId)
    })

  return (
    <form
      class="new-rfq"
      onSubmit={(e) => {
        e.preventDefault()
        void submit()
      }}
    >
      <h2>New RFQ</h2>
      <div class="row">
        <label>
          Base currency{" "}
          <select
            aria-label="base currency"
            value={draft.baseCurrency}
            onChange={(e) => {
              const base = BASE_CURRENCIES.find((c) => c === e.currentTarget.value) ?? "BTC"
              change({ baseCurrency: base, quoteCurrency: draft.quoteCurrency === "USDC" ? "USDC" : base })
            }}
          >
            {BASE_CURRENCIES.map((c) => (
              <option key={c}>{c}</option>
            ))}
          </select>
        </label>
        <ShortField
          label="Amount"
          name="amount"
          inputMode="decimal"
          placeholder="e.g. 100"
          value={draft.amount}
          onInput={(amount) => change({ amount })}
        />
        <span class="hint">options: in {draft.baseCurrency}; futures: in the quote currency</span>
      </div>
      <div class="row">
        <span>Settlement options:</span>
        {SETTLEMENT_OPTIONS.map((o) => (
          <label key={o}>
            <input
              type="checkbox"
              aria-label={`settle on ${o}`}
              checked={draft.settlementOptions.includes(o)}
              onChange={(e) => setOption(o, e.currentTarget.checked)}
            />{" "}
            {o}
          </label>
        ))}
        {draft.settlementOptions.includes("DBT") && (
          <label>
            DBT quote currency{" "}
            <select
              aria-label="quote currency"
              value={draft.quoteCurrency}
              onChange={(e) => change({ quoteCurrency: e.currentTarget.value })}
            >
              <option value={draft.baseCurrency}>{draft.baseCurrency}</option>
              <option value="USDC">USDC</option>
            </select>
          </label>
        )}
        {draft.settlementOptions.includes("BULL") && <span class="hint">BULL quotes in USDC</span>}
      </div>
      <div class="row">
        <label>
          <input
            type="checkbox"
            checked={draft.anonymous}
            onChange={(e) => change({ anonymous: e.currentTarget.checked })}
          />{" "}
          Anonymous
        </label>
        <label>
          Label{" "}
          <input
            aria-label="label"
            value={draft.label}
            onInput={(e) => change({ label: e.currentTarget.value })}
          />
        </label>
      </div>
      <ErrorBox error={instruments.error} />
      <LegsEditor
        legs={draft.legs}
        onChange={(legs) => change({ legs })}
        instruments={instruments.data ?? []}
      />
      <HedgeEditor
        hedge={draft.hedge}
        onChange={(hedge) => change({ hedge })}
        instruments={instruments.data ?? []}
      />
      <p class="structure">
        {"problem" in structure ? (
          <span class="hint">{structure.problem}</span>
        ) : (
          <>
            Strategy: <strong data-testid="strategy">{structure.strategy}</strong> ·{" "}
            <span data-testid="description">{structure.description}</span>
          </>
        )}
      </p>
      <ErrorBox error={credentials.error} />
      <ErrorBox error={makers.error} />
      {draft.settlementOptions.map((option) => (
        <SettlementEditor
          key={option}
          option={option}
          accounts={draft.accounts[option] ?? []}
          onAccounts={(accounts) => change({ accounts: { ...draft.accounts, [option]: accounts } })}
          credentials={credentials.data ?? []}
          makers={makers.data ?? []}
          invited={draft.makers[option] ?? []}
          onInvited={(ids) => change({ makers: { ...draft.makers, [option]: ids } })}
        />
      ))}
      {issues.length > 0 && (
        <div class="issues-box">
          <strong>Before sending:</strong>
          <IssueList name="request problems" issues={issues} />
        </div>
      )}
      <ErrorBox error={send.error} />
      <div class="row">
        <button type="submit" class="primary" disabled={send.busy || issues.length > 0}>
          {send.busy ? "Sending…" : "Send RFQ"}
        </button>
        <button type="button" onClick={() => setDraft(emptyDraft())}>
          Clear
        </button>
      </div>
    </form>
  )
}
